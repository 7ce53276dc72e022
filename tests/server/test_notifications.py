"""Change notifications (contract §5): a change made on disk by ANOTHER process reaches
listening clients, through 2025 `resources/subscribe` (legacy) and 2026 `listen` (auto).

The plan is made before the server starts, so the server's watcher has it in its
baseline; each test first checks a quiet spell with no notification, then lets a real
subprocess write to the same root with planning_core and waits for the notice."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.types import ResourceListChangedNotification, ResourceUpdatedNotification

from planning_core import FileStore, Planner

REPO = Path(__file__).resolve().parents[2]
SEED_NAME = "2026-05-28-add-auth"
ACTIVE = "plans://active"
PLAN_URI = f"plans://{SEED_NAME}"
QUIET = 0.8  # > 3 watcher intervals (0.25 s)
WAIT = 10.0

CREATE_TASK = """
import sys
from planning_core import FileStore, Planner
Planner(FileStore(sys.argv[1])).create_task(sys.argv[2], "Made elsewhere", "by another process")
"""
CREATE_PLAN = """
import sys
from planning_core import FileStore, Planner
Planner(FileStore(sys.argv[1])).create_plan("From elsewhere", "a", "b", date="2026-06-01")
"""


def make_plan(root: Path) -> None:
    store = FileStore(root)
    store.ensure_writable()
    Planner(store).create_plan("Add auth", "a", "b", date="2026-05-28", tasks=[{"subject": "first"}])


async def other_process(snippet: str, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    await anyio.run_process([sys.executable, "-c", snippet, *args], cwd=REPO, env=env, check=True)


class Inbox:
    """A legacy message_handler that records what the server sent."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self._changed = anyio.Event()

    async def __call__(self, message: Any) -> None:
        self.messages.append(message)
        self._changed.set()
        self._changed = anyio.Event()

    def updated(self) -> set[str]:
        return {str(m.params.uri) for m in self.messages if isinstance(m, ResourceUpdatedNotification)}

    def list_changed(self) -> bool:
        return any(isinstance(m, ResourceListChangedNotification) for m in self.messages)

    async def wait_for(self, done: Callable[[], bool]) -> None:
        with anyio.fail_after(WAIT):
            while not done():
                await self._changed.wait()


@pytest.mark.parametrize("mode", ["legacy"], indirect=True)
async def test_legacy_subscribe_gets_updates_from_another_process(connect: Any, root: Path, text: Any) -> None:
    make_plan(root)
    inbox = Inbox()
    async with connect(message_handler=inbox) as c:
        assert c.server_capabilities.resources and c.server_capabilities.resources.subscribe
        await c.subscribe_resource(ACTIVE)
        await c.subscribe_resource(PLAN_URI)
        await anyio.sleep(QUIET)
        assert inbox.updated() == set(), "notified although nothing changed"

        await other_process(CREATE_TASK, str(root), SEED_NAME)
        await inbox.wait_for(lambda: {ACTIVE, PLAN_URI} <= inbox.updated())
        assert not inbox.list_changed()  # no plan came or went
        # What the notice points at shows the change.
        active = (await c.read_resource(ACTIVE)).contents[0].text
        assert active == f"# Active Plans\n- {SEED_NAME} [0/2 done]"
        board = text(await c.call_tool("TaskList", {}))
        assert "#2 [pending] Made elsewhere" in board

        # A plan that comes from elsewhere: updated + list changed.
        await other_process(CREATE_PLAN, str(root))
        await inbox.wait_for(inbox.list_changed)
        assert "2026-06-01-from-elsewhere" in (await c.read_resource(ACTIVE)).contents[0].text


@pytest.mark.parametrize("mode", ["legacy"], indirect=True)
async def test_legacy_unsubscribed_uri_is_not_sent(connect: Any, root: Path) -> None:
    make_plan(root)
    inbox = Inbox()
    async with connect(message_handler=inbox) as c:
        await c.subscribe_resource(PLAN_URI)
        await other_process(CREATE_TASK, str(root), SEED_NAME)
        await inbox.wait_for(lambda: PLAN_URI in inbox.updated())
        await anyio.sleep(QUIET)
        assert ACTIVE not in inbox.updated()


@pytest.mark.parametrize("mode", ["auto"], indirect=True)
async def test_listen_gets_updates_from_another_process(connect: Any, root: Path) -> None:
    make_plan(root)
    async with connect() as c, c.listen(resource_subscriptions=[ACTIVE]) as sub:
        events: list[Any] = []
        with anyio.move_on_after(QUIET):
            async for ev in sub:
                events.append(ev)
        assert events == [], "notified although nothing changed"

        await other_process(CREATE_TASK, str(root), SEED_NAME)
        with anyio.fail_after(WAIT):
            async for ev in sub:
                if ev == ResourceUpdated(uri=ACTIVE):
                    break
        active = (await c.read_resource(ACTIVE)).contents[0].text
        assert active == f"# Active Plans\n- {SEED_NAME} [0/2 done]"


@pytest.mark.parametrize("mode", ["auto"], indirect=True)
async def test_listen_gets_list_changed_when_a_plan_comes(connect: Any, root: Path) -> None:
    make_plan(root)
    async with connect() as c, c.listen(resources_list_changed=True, resource_subscriptions=[ACTIVE]) as sub:
        await other_process(CREATE_PLAN, str(root))
        seen: list[Any] = []
        with anyio.fail_after(WAIT):
            async for ev in sub:
                seen.append(ev)
                if isinstance(ev, ResourcesListChanged) and ResourceUpdated(uri=ACTIVE) in seen:
                    break
        assert "2026-06-01-from-elsewhere" in (await c.read_resource(ACTIVE)).contents[0].text


async def test_own_tool_change_notifies_too(connect: Any, root: Path, mode: str) -> None:
    """A change made through this server travels the same path (both modes)."""
    make_plan(root)
    if mode == "legacy":
        inbox = Inbox()
        async with connect(message_handler=inbox) as c:
            await c.subscribe_resource(ACTIVE)
            result = await c.call_tool("TaskUpdate", {"taskId": 1, "status": "in_progress"})
            assert not result.is_error
            await inbox.wait_for(lambda: ACTIVE in inbox.updated())
    else:
        async with connect() as c, c.listen(resource_subscriptions=[ACTIVE]) as sub:
            result = await c.call_tool("TaskUpdate", {"taskId": 1, "status": "in_progress"})
            assert not result.is_error
            with anyio.fail_after(WAIT):
                async for ev in sub:
                    if ev == ResourceUpdated(uri=ACTIVE):
                        break
