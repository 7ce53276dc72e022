"""A 2026-07-28 request is stateless: whatever session id it carries (a live 2025 session's
`mcp-session-id` header, or `?session_id=`), it is the one default session (README,
Sessions), never that 2025 session, and it makes no session of its own. A real
`planning-mcp serve --transport http` child on every store (files, PostgreSQL)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psycopg
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from planning_core.session import TODO_REMINDER
from planning_core.stores.postgres.schema import SESSIONS
from tests.support.mcp import text_of
from tests.support.store_urls import serving_store

MODERN = "2026-07-28"
DEADLINE = 90.0  # seconds for a whole test: a bound on "never hangs"


async def ok(c: Client, tool: str, args: dict[str, Any]) -> CallToolResult:
    r = await c.call_tool(tool, args)
    assert not r.is_error, text_of(r)
    return r


async def make_plan(c: Client, slug: str) -> str:
    plan = {
        "title": slug,
        "analysis": "a",
        "approach": "b",
        "name": slug,
        "tasks": [{"subject": "t", "description": "d"}],
    }
    return str((await ok(c, "PlanCreate", plan)).structured_content["plan"]["name"])


@asynccontextmanager
async def legacy_session(url: str) -> AsyncIterator[tuple[Client, str]]:
    """A 2025 streamable-HTTP client and the mcp-session-id the server gave it."""
    given: list[str] = []

    async def note(response: httpx2.Response) -> None:
        if "mcp-session-id" in response.headers:
            given.append(response.headers["mcp-session-id"])

    async with (
        httpx2.AsyncClient(event_hooks={"response": [note]}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        yield client, given[0]


@asynccontextmanager
async def stateless(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers=headers or {}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=MODERN) as client,
    ):
        yield client


async def test_a_2026_request_naming_a_live_2025_session_gets_the_default_session(
    store_url: str, tmp_path: Path
) -> None:
    with serving_store(tmp_path, "http", store_url) as srv, anyio.fail_after(DEADLINE):
        url = f"{srv.base}/mcp"
        async with legacy_session(url) as (legacy, sid):
            own = await make_plan(legacy, "legacy-own")  # the 2025 session's current plan
            await ok(legacy, "todo", {"items": [{"content": "legacy's", "status": "pending"}]})  # todo round 0
            async with stateless(url) as plain:
                shared = await make_plan(plain, "default-current")  # the default session's current plan
            for carrier, headers in ((url, {"mcp-session-id": sid}), (f"{url}?session_id={sid}", None)):
                async with stateless(carrier, headers) as borrower:
                    listed = text_of(await ok(borrower, "TaskList", {}))
                    assert listed.splitlines()[0].startswith(f"{shared} ["), listed
                    await ok(borrower, "TaskCreate", {"subject": "from 2026", "description": "d"})
                    # A list with nothing unfinished: had it replaced the 2025 session's, that
                    # session's todo reminder would never come.
                    await ok(borrower, "todo", {"items": [{"content": "borrowed", "status": "completed"}]})
            # The 2025 session is as it left it: its current plan, its todo list and reminder clock.
            first = text_of(await ok(legacy, "TaskList", {}))  # todo round 1
            assert first.splitlines()[0] == f"{own} [0/1 done]", first
            assert "from 2026" not in first
            assert TODO_REMINDER not in text_of(await ok(legacy, "PlanList", {}))  # todo round 2
            assert TODO_REMINDER in text_of(await ok(legacy, "PlanList", {}))  # todo round 3
        async with stateless(url) as plain:
            board = text_of(await ok(plain, "TaskList", {"plan": shared}))
            assert board.count("from 2026") == 2, board
    assert "Traceback" not in srv.stderr(), srv.stderr()


async def test_stateless_requests_with_session_ids_make_no_session_rows(tmp_path: Path) -> None:
    """Each distinct id a 2026 request carried became a session row, kept 24 hours (about
    170,000 an hour under such traffic). Now they all share the default session's one row."""
    from tests.support.pg import fresh_database_url

    url = fresh_database_url()
    with serving_store(tmp_path, "http", url) as srv, anyio.fail_after(DEADLINE):
        for n in range(20):
            async with stateless(f"{srv.base}/mcp", {"mcp-session-id": uuid.uuid4().hex}) as c:
                await ok(c, "PlanList", {})
                if n % 2:
                    await ok(c, "todo", {"items": [{"content": f"call {n}", "status": "pending"}]})
        with psycopg.connect(url) as conn:
            keys = [row[0] for row in conn.execute(f"SELECT key FROM {SESSIONS}").fetchall()]
    assert keys == ["default"], keys
