"""A real server on a PostgreSQL role allowed 3 connections: a burst of 40 sessions
starting at once may be refused while it lasts (each refusal a tool error naming the
limit and what to do), and the server answers again within a bound once it is over: its
pools give idle connections back instead of keeping them (once: every call failed for
11 minutes), and a connect that failed is tried afresh by the next call. A call that
waited in vain while the pool's connects were refused for the limit names the limit, even
when the limit is free again by the time it looks (a slow machine). The database
and the server are real (tests.support.pg, a server child)."""

from __future__ import annotations

import json
import time
import uuid
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx2
import psycopg
from mcp import Client

from planning_core import Planner
from planning_core.stores import open_store
from tests.support.mcp import text_of
from tests.support.pg import fresh_database_url
from tests.support.store_urls import serving_store
from tests.support.waits import bound

ROLE_LIMIT = 3  # the LISTEN connection, one for the call's session, one for its plan
BURST = 40  # sessions starting at once
BURST_BOUND = bound(40.0)  # seconds for the whole burst to be answered, refusals included
RECOVERY_BOUND = bound(20.0)  # seconds after the burst within which calls succeed again
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
INIT = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "burst", "version": "1"}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LIMIT_SAID = "refuses more connections"  # errors.DatabaseAtLimit: what it is and what to do


def limited_role(url: str) -> str:
    """A new role allowed ROLE_LIMIT connections, owning the database of `url`; its URL."""
    role = f"limited_{uuid.uuid4().hex[:8]}"
    dbname = urlsplit(url).path.lstrip("/")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN CONNECTION LIMIT {ROLE_LIMIT}")
        conn.execute(f'ALTER DATABASE "{dbname}" OWNER TO {role}')
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port}"))


async def call(base: str, mode: str, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    """A session of the SDK's client: connect, call, leave. (ok, text)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        async with Client(f"{base}/mcp", mode=mode) as c:
            r = await c.call_tool(tool, args)
            return (not r.is_error, text_of(r))


async def raw_session(http: httpx2.AsyncClient, base: str, tool: str) -> dict[str, Any]:
    """A 2025 session opened and used at once, as fast as HTTP goes (the SDK's client
    takes turns with itself): initialize, initialized, one tools/call; its result."""
    opened = await http.post(f"{base}/mcp", json=rpc(0, "initialize", INIT), headers=ACCEPT)
    assert opened.status_code == 200, opened.text
    headers = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": LEGACY}
    await http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    answer = await http.post(f"{base}/mcp", json=rpc(1, "tools/call", {"name": tool, "arguments": {}}), headers=headers)
    assert answer.status_code == 200, answer.text
    data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    result: dict[str, Any] = json.loads(data[-1] if data else answer.text)["result"]
    return result


def rpc(rid: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params is not None else {})}


async def test_a_burst_over_the_connection_limit_is_refused_clearly_and_the_server_recovers(tmp_path: Path) -> None:
    url = limited_role(fresh_database_url())
    made = open_store(url)
    Planner(made).create_plan(title="Limits", analysis="a", approach="b")
    made.close()
    with serving_store(tmp_path, "http", url) as srv:
        async with httpx2.AsyncClient(timeout=BURST_BOUND) as http:
            with anyio.fail_after(BURST_BOUND):
                results: list[dict[str, Any]] = []

                async def one() -> None:
                    results.append(await raw_session(http, srv.base, "TaskList"))

                async with anyio.create_task_group() as tg:
                    for _ in range(BURST):
                        tg.start_soon(one)
        assert len(results) == BURST
        for r in results:  # each answered: done, or refused saying why and what to do
            assert not r.get("isError") or LIMIT_SAID in text_of(r), text_of(r)

        deadline = time.monotonic() + RECOVERY_BOUND
        said = ""
        while True:
            ok, said = await call(srv.base, MODERN, "TaskList", {})
            if ok:
                break
            assert time.monotonic() < deadline, f"no answer within {RECOVERY_BOUND}s of the burst: {said}"
            await anyio.sleep(0.5)  # the retry's pace
        for n in range(4):  # and it keeps answering, 2025 sessions and 2026 requests
            ok, said = await call(srv.base, "legacy" if n % 2 else MODERN, "TaskList", {})
            assert ok, said
        assert srv.proc.poll() is None and "Traceback" not in srv.stderr(), srv.stderr()
