"""Two stdio server processes on one PostgreSQL database, then `pg_ctl restart`: a client
subscribed through one server still hears a change made through the other. The change
feed's LISTEN connection is cut by the restart and the first attempts to listen again are
refused while the database shuts down and starts; the feed keeps trying and, once it hears
again, looks at every plan once (a notice sent while it was away is lost)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from tests.support.mcp import connect, text_of
from tests.support.pg import cluster, fresh_database_url
from tests.support.seed import PLAN_DATE
from tests.support.store_urls import stdio_params
from tests.support.updates import Inbox
from tests.support.waits import bound

ACTIVE = "plans://active"
UPDATED = f"updated {ACTIVE}"


async def _until_done(client: Client, tool: str, args: dict[str, Any]) -> str:
    """Call `tool` until it succeeds: the first calls after a restart may find the
    database still starting (a clear tool error, nothing changed)."""
    with anyio.fail_after(bound(30)):
        while True:
            r = await client.call_tool(tool, args)
            if not r.is_error:
                return text_of(r)
            await anyio.sleep(0.2)


async def test_a_change_after_a_database_restart_reaches_the_other_servers_client(tmp_path: Path) -> None:
    url = fresh_database_url()
    inbox = Inbox()
    async with (
        connect(stdio_params(url, tmp_path), tmp_path / "a.log", "legacy", message_handler=inbox) as a,
        connect(stdio_params(url, tmp_path), tmp_path / "b.log", "legacy") as b,
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await a.subscribe_resource(ACTIVE)
        args = {"title": "Shared", "analysis": "a", "approach": "b", "name": "shared", "date": PLAN_DATE}
        await _until_done(b, "PlanCreate", args)
        await inbox.wait_for(UPDATED)  # the handshake: A hears B before the restart

        cluster().restart()
        plan = f"{PLAN_DATE}-shared"
        # Each change through B after the restart; A must hear one of them. Several are made
        # (each after a wait for A's notice), so the test does not depend on when A's feed
        # is listening again.
        with anyio.fail_after(bound(40)):
            for n in range(1, 1000):
                after = len(inbox.labels)
                await _until_done(b, "TaskCreate", {"subject": f"After {n}", "description": "d", "plan": plan})
                with anyio.move_on_after(bound(5)):
                    await inbox.wait_for(UPDATED, after)
                if UPDATED in inbox.labels[after:]:
                    break
        assert UPDATED in inbox.labels[after:]
        assert "[pending] After 1" in text_of(await a.call_tool("TaskList", {"plan": plan}))
