"""Change notifications: a change made on disk by ANOTHER process reaches
listening clients, through 2025 `resources/subscribe` (legacy) and 2026 `listen` (auto).

The plan is made before the server starts, so the server's watcher has it in its
baseline; each test first checks a quiet spell with no notification, then lets a real
subprocess write to the same root with planning_core and waits for the notice."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.types import ResourceListChangedNotification, ResourceUpdatedNotification

from tests.support.procs import REPO, child_env
from tests.support.seed import PLAN_NAME, make_plan
from tests.support.waits import bound

ACTIVE = "plans://active"
PLAN_URI = f"plans://{PLAN_NAME}"
# How long a check that NOTHING arrives waits (a bounded negative check, not a start
# signal): more than 3 watcher intervals (0.25 s), so a change would have been seen.
NOTHING_ARRIVES_WITHIN = 0.8
WAIT = bound(10)

CREATE_TASK = """
import sys
from planning_core import Planner
from planning_core.stores.files import FileStore
Planner(FileStore(sys.argv[1])).create_task(sys.argv[2], "Made elsewhere", "by another process")
"""
CREATE_PLAN = """
import sys
from planning_core import Planner
from planning_core.stores.files import FileStore
Planner(FileStore(sys.argv[1])).create_plan("From elsewhere", analysis="a", approach="b", date="2026-06-01")
"""


def add_auth_plan(root: Path) -> None:
    """PLAN_NAME with one task, made before the server starts (in the watcher's baseline)."""
    folder = make_plan(root, "add-auth", [{"subject": "first"}], title="Add auth", analysis="a", approach="b")
    assert folder.name == PLAN_NAME


async def other_process(snippet: str, *args: str) -> None:
    await anyio.run_process([sys.executable, "-c", snippet, *args], cwd=REPO, env=child_env(), check=True)


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

    def count(self, uri: str) -> int:
        return sum(1 for m in self.messages if isinstance(m, ResourceUpdatedNotification) and str(m.params.uri) == uri)

    def list_changed(self) -> bool:
        return any(isinstance(m, ResourceListChangedNotification) for m in self.messages)

    async def wait_for(self, done: Callable[[], bool]) -> None:
        with anyio.fail_after(WAIT):
            while not done():
                await self._changed.wait()


@pytest.mark.parametrize("mode", ["legacy"], indirect=True)
async def test_legacy_subscribe_gets_updates_from_another_process(connect: Any, root: Path, text: Any) -> None:
    add_auth_plan(root)
    inbox = Inbox()
    async with connect(message_handler=inbox) as c:
        assert c.server_capabilities.resources and c.server_capabilities.resources.subscribe
        await c.subscribe_resource(ACTIVE)
        await c.subscribe_resource(PLAN_URI)
        await anyio.sleep(NOTHING_ARRIVES_WITHIN)
        assert inbox.updated() == set(), "notified although nothing changed"

        await other_process(CREATE_TASK, str(root), PLAN_NAME)
        await inbox.wait_for(lambda: {ACTIVE, PLAN_URI} <= inbox.updated())
        assert not inbox.list_changed()  # no plan came or went
        # What the notice points at shows the change.
        active = (await c.read_resource(ACTIVE)).contents[0].text
        assert active == f"# Active Plans\n- {PLAN_NAME} [0/2 done]"
        board = text(await c.call_tool("TaskList", {}))
        assert "#2 [pending] Made elsewhere" in board

        # A plan that comes from elsewhere: updated + list changed.
        await other_process(CREATE_PLAN, str(root))
        await inbox.wait_for(inbox.list_changed)
        assert "2026-06-01-from-elsewhere" in (await c.read_resource(ACTIVE)).contents[0].text


@pytest.mark.parametrize("mode", ["legacy"], indirect=True)
async def test_legacy_unsubscribed_uri_is_not_sent(connect: Any, root: Path) -> None:
    add_auth_plan(root)
    inbox = Inbox()
    async with connect(message_handler=inbox) as c:
        await c.subscribe_resource(PLAN_URI)
        await other_process(CREATE_TASK, str(root), PLAN_NAME)
        await inbox.wait_for(lambda: PLAN_URI in inbox.updated())
        # A marker instead of a wait: a second change, noticed after the first one's round
        # (notices arrive in order), so an ACTIVE notice of the first round is in by then.
        await other_process(CREATE_TASK, str(root), PLAN_NAME)
        await inbox.wait_for(lambda: inbox.count(PLAN_URI) >= 2)
        assert ACTIVE not in inbox.updated()


@pytest.mark.parametrize("mode", ["auto"], indirect=True)
async def test_listen_gets_updates_from_another_process(connect: Any, root: Path) -> None:
    add_auth_plan(root)
    async with connect() as c, c.listen(resource_subscriptions=[ACTIVE]) as sub:
        events: list[Any] = []
        with anyio.move_on_after(NOTHING_ARRIVES_WITHIN):
            async for ev in sub:
                events.append(ev)
        assert events == [], "notified although nothing changed"

        await other_process(CREATE_TASK, str(root), PLAN_NAME)
        with anyio.fail_after(WAIT):
            async for ev in sub:
                if ev == ResourceUpdated(uri=ACTIVE):
                    break
        active = (await c.read_resource(ACTIVE)).contents[0].text
        assert active == f"# Active Plans\n- {PLAN_NAME} [0/2 done]"


@pytest.mark.parametrize("mode", ["auto"], indirect=True)
async def test_listen_gets_list_changed_when_a_plan_comes(connect: Any, root: Path) -> None:
    add_auth_plan(root)
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
    add_auth_plan(root)
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
