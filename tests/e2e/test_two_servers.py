"""Two stdio server processes on one store (store_url: one folder, or one database): a
change made through one reaches a client of the other as a resources/updated notification
(2025 subscribe and 2026 listen). Over HTTP, with its one-second bound: test_shared_store."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.support.mcp import connect, text_of
from tests.support.seed import PLAN_DATE
from tests.support.store_urls import stdio_params
from tests.support.updates import Inbox
from tests.support.waits import bound

ACTIVE = "plans://active"
UPDATED = f"updated {ACTIVE}"
PLAN = f"{PLAN_DATE}-shared"


async def make_plan(client: Client) -> str:
    r = await client.call_tool(
        "PlanCreate", {"title": "Shared", "analysis": "a", "approach": "b", "name": "shared", "date": PLAN_DATE}
    )
    assert not r.is_error, text_of(r)
    return str(r.structured_content["plan"]["name"])


async def test_legacy_client_hears_the_other_servers_change(store_url: str, tmp_path: Path) -> None:
    inbox = Inbox()
    a_params = stdio_params(store_url, tmp_path)
    async with connect(a_params, tmp_path / "a.log", "legacy", message_handler=inbox) as a:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await a.subscribe_resource(ACTIVE)
        # The handshake: A's watcher reports A's own new plan, so from here on it has the
        # plan in its picture and what it reports next is a change made after this point.
        plan = await make_plan(a)
        await inbox.wait_for(UPDATED)
        async with connect(stdio_params(store_url, tmp_path), tmp_path / "b.log", "legacy") as b:
            after = len(inbox.labels)
            r = await b.call_tool("TaskCreate", {"subject": "From B", "description": "d", "plan": plan})
            assert not r.is_error, text_of(r)
            await inbox.wait_for(UPDATED, after)
        board = text_of(await a.call_tool("TaskList", {"plan": plan}))
        assert "#1 [pending] From B" in board


@pytest.mark.parametrize("mode", ["auto"])
async def test_listening_client_hears_the_other_servers_change(store_url: str, tmp_path: Path, mode: str) -> None:
    uri = f"plans://{PLAN}"
    async with connect(stdio_params(store_url, tmp_path), tmp_path / "a.log", mode) as a:
        async with a.listen(resource_subscriptions=[uri]) as events:
            # The handshake, as above: A's own new plan is reported first.
            assert await make_plan(a) == PLAN
            with anyio.fail_after(bound(10)):
                await next_event_for(events, uri)
            async with connect(stdio_params(store_url, tmp_path), tmp_path / "b.log", mode) as b:
                r = await b.call_tool("TaskCreate", {"subject": "From B", "description": "d", "plan": PLAN})
                assert not r.is_error, text_of(r)
                with anyio.fail_after(bound(10)):
                    await next_event_for(events, uri)
        board = text_of(await a.call_tool("TaskList", {"plan": PLAN}))
        assert "#1 [pending] From B" in board


async def next_event_for(events: Any, uri: str) -> None:
    async for event in events:
        if getattr(event, "uri", None) == uri:
            return
    raise AssertionError(f"the event stream ended before an event for {uri}")
