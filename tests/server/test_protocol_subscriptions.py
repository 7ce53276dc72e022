"""2025 resources/subscribe: a set of URIs per session, found again by unsubscribe,
gone when the session ends, bounded; list_changed once per change to every 2025
session. First through the in-memory client (where the server's subscription table
can be looked at), then through a real `planning-mcp` stdio child, counting every
frame it writes."""

from __future__ import annotations

import itertools
import json
import os
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError

from planning_core import Planner
from planning_core.fileio import atomic
from planning_core.stores.files import FileStore
from server.mcp.app import build_server
from server.mcp.notify import MAX_SUBSCRIPTIONS, Notifier
from tests.support.procs import console_script, serving
from tests.support.raw_stdio import RawStdio
from tests.support.updates import Inbox
from tests.support.waits import bound

ACTIVE = "plans://active"
PLAN_A, PLAN_B = "2026-05-28-plan-a", "2026-05-29-plan-b"
URI_A, URI_B = f"plans://{PLAN_A}", f"plans://{PLAN_B}"
WAIT = bound(10)

pytestmark = pytest.mark.parametrize("mode", ["legacy"], indirect=True)


def make_plans(root: Path) -> None:
    """Two plans made before the server starts, so they are in the watcher's baseline."""
    store = FileStore(root)
    store.ensure_writable()
    planner = Planner(store)
    planner.create_plan("Plan A", analysis="a", approach="b", date="2026-05-28", tasks=[{"subject": "first"}])
    planner.create_plan("Plan B", analysis="a", approach="b", date="2026-05-29", tasks=[{"subject": "first"}])


@asynccontextmanager
async def client(server: Any, inbox: Inbox | None = None) -> AsyncIterator[Client]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # resources/subscribe is deprecated at 2026 (MCPDeprecationWarning)
        async with Client(server, mode="legacy", message_handler=inbox) as c:
            yield c


_touches = itertools.count()


async def touch(c: Client, plan: str) -> None:
    """One change to one plan: a single task file rewritten (a new text each time: an
    update that changes nothing writes nothing)."""
    result = await c.call_tool("TaskUpdate", {"plan": plan, "taskId": 1, "description": f"change {next(_touches)}"})
    assert not result.is_error


# -- in-memory: the subscription table ---------------------------------------------------


async def test_subscribe_is_a_set_per_session_and_unsubscribe_finds_it(root: Path, mode: str) -> None:
    make_plans(root)
    notifier = Notifier(InMemorySubscriptionBus())
    server = build_server(root, notifier=notifier)
    async with client(server) as c:
        for _ in range(4):
            await c.subscribe_resource(ACTIVE)
        await c.subscribe_resource(URI_A)
        assert list(notifier.connections.values()) == [{ACTIVE, URI_A}]
        await c.unsubscribe_resource(ACTIVE)
        assert list(notifier.connections.values()) == [{URI_A}]
        await c.unsubscribe_resource("plans://never-subscribed")  # harmless
        assert list(notifier.connections.values()) == [{URI_A}]
    # The session ended: nothing of it is kept.
    assert notifier.connections == {}


async def test_20000_subscribes_leave_one_entry_and_a_closed_session_leaves_none(root: Path, mode: str) -> None:
    notifier = Notifier(InMemorySubscriptionBus())
    server = build_server(root, notifier=notifier)
    async with client(server) as first, client(server) as second:
        await second.subscribe_resource(ACTIVE)
        async with anyio.create_task_group() as tg:
            for _ in range(20):  # 20 callers x 1,000 subscribes, like a client in a loop

                async def subscribe_many() -> None:
                    for _ in range(1_000):
                        await first.subscribe_resource(ACTIVE)

                tg.start_soon(subscribe_many)
        assert sorted(len(uris) for uris in notifier.connections.values()) == [1, 1]
    assert notifier.connections == {}


async def test_subscriptions_are_bounded_per_session(root: Path, mode: str) -> None:
    notifier = Notifier(InMemorySubscriptionBus())
    async with client(build_server(root, notifier=notifier)) as c:
        for i in range(MAX_SUBSCRIPTIONS):
            await c.subscribe_resource(f"plans://2026-01-01-p{i}")
        with pytest.raises(MCPError) as info:
            await c.subscribe_resource("plans://one-too-many")
        assert "limit" in info.value.message and "unsubscribe" in info.value.message
        assert info.value.code == -32602  # the request is over a bound: invalid params, not a server fault
        await c.subscribe_resource("plans://2026-01-01-p0")  # already there: still fine
        await c.unsubscribe_resource("plans://2026-01-01-p0")
        await c.subscribe_resource("plans://one-too-many")  # room again
        assert [len(uris) for uris in notifier.connections.values()] == [MAX_SUBSCRIPTIONS]


async def test_four_subscribes_one_notice_per_change_in_memory(root: Path, mode: str) -> None:
    make_plans(root)
    inbox = Inbox()
    async with client(build_server(root), inbox) as c:
        for _ in range(4):
            await c.subscribe_resource(ACTIVE)
        await c.subscribe_resource(URI_A)
        await c.subscribe_resource(URI_B)
        await touch(c, PLAN_A)
        await inbox.wait_for(f"updated {URI_A}")
        await touch(c, PLAN_B)  # the marker: its notices come after all of A's
        await inbox.wait_for(f"updated {URI_B}")
        first_round = inbox.labels[: inbox.labels.index(f"updated {URI_B}")]
        assert first_round == [f"updated {URI_A}", f"updated {ACTIVE}"]


async def test_list_changed_reaches_a_session_that_never_subscribed(root: Path, mode: str) -> None:
    make_plans(root)
    quiet, loud = Inbox(), Inbox()
    server = build_server(root)
    async with client(server, quiet) as bystander, client(server, loud) as c:
        assert bystander.server_capabilities.resources and bystander.server_capabilities.resources.list_changed
        for _ in range(4):
            await c.subscribe_resource(ACTIVE)
        created = await c.call_tool("PlanCreate", {"title": "New", "analysis": "a", "approach": "b"})
        assert not created.is_error
        await quiet.wait_for("list_changed")
        await loud.wait_for("list_changed")
        # A later change that is no list change, as a marker: a second copy of the
        # list change would have come before it.
        await c.subscribe_resource(URI_A)
        await touch(c, PLAN_A)
        await loud.wait_for(f"updated {URI_A}")
        assert quiet.labels.count("list_changed") == 1, quiet.labels
        assert loud.labels.count("list_changed") == 1, loud.labels
        assert not any(label.startswith("updated") for label in quiet.labels), quiet.labels


# -- a real stdio server, every frame counted --------------------------------------------


@contextmanager
def stdio_server(root: Path, errlog: Path) -> Iterator[RawStdio]:
    """`planning-mcp --root ROOT` (stdio), initialized as a 2025 client; every
    notification it writes is kept, in order, in `wire.notifications`."""
    wire = RawStdio(root, errlog, command=(console_script(),), cwd=root.parent)
    try:
        wire.initialize()
        yield wire
    finally:
        wire.close()


def subscribe(wire: RawStdio, uri: str) -> None:
    assert "result" in wire.answer(wire.request("resources/subscribe", {"uri": uri}))


def updated(uri: str) -> Callable[[dict[str, Any]], bool]:
    return lambda n: n.get("method") == "notifications/resources/updated" and n["params"]["uri"] == uri


def call_ok(wire: RawStdio, tool: str, args: dict[str, Any]) -> None:
    result = wire.call(tool, args)
    assert not result.get("isError"), result


def list_changed(n: dict[str, Any]) -> bool:
    return n.get("method") == "notifications/resources/list_changed"


def labels(notifications: list[dict[str, Any]]) -> list[str]:
    """The notifications as `updated <uri>` / `list_changed` labels, in order."""
    out = []
    for n in notifications:
        if n.get("method") == "notifications/resources/updated":
            out.append(f"updated {n['params']['uri']}")
        elif list_changed(n):
            out.append("list_changed")
    return out


def test_stdio_four_subscribes_one_notice_then_unsubscribe_none(tmp_path: Path, root: Path, mode: str) -> None:
    make_plans(root)
    with stdio_server(root, tmp_path / "stderr.txt") as wire:
        for _ in range(4):
            subscribe(wire, ACTIVE)
        subscribe(wire, URI_A)
        subscribe(wire, URI_B)
        call_ok(wire, "TaskUpdate", {"plan": PLAN_A, "taskId": 1, "description": "changed"})
        wire.notification(updated(URI_A))
        call_ok(wire, "TaskUpdate", {"plan": PLAN_B, "taskId": 1, "description": "changed"})
        wire.notification(updated(URI_B))
        assert labels(wire.notifications) == [f"updated {URI_A}", f"updated {ACTIVE}", f"updated {URI_B}"]
        wire.notification(updated(ACTIVE))  # the end of B's round

        mark = len(wire.notifications)
        assert "result" in wire.answer(wire.request("resources/unsubscribe", {"uri": ACTIVE}))
        call_ok(wire, "TaskUpdate", {"plan": PLAN_A, "taskId": 1, "description": "again"})
        wire.notification(updated(URI_A))
        call_ok(wire, "TaskUpdate", {"plan": PLAN_B, "taskId": 1, "description": "again"})
        wire.notification(updated(URI_B))
        assert labels(wire.notifications[mark:]) == [f"updated {URI_A}", f"updated {URI_B}"]


def test_stdio_a_write_is_told_once_when_it_lands_not_when_its_temp_file_appears(
    tmp_path: Path, root: Path, mode: str
) -> None:
    """A writer's temp file appears in the plan folder (which moves the folder's version)
    before the rename that lands the write; the rename is what the change feed names. Told
    on the temp file, a client re-read the old task, then was told again. The handshake:
    a change to plan B after the temp file, whose notices come only once the watcher has
    looked at everything before it."""
    make_plans(root)
    folder = root / "todo" / PLAN_A
    with stdio_server(root, tmp_path / "stderr.txt") as wire:
        for uri in (ACTIVE, URI_A, URI_B):
            subscribe(wire, uri)
        task = json.loads((folder / "task_1.json").read_text())
        temp = atomic.temp_name(folder / "task_1.json")
        with open(temp, "w") as f:  # written as a writer writes it, not yet renamed into place
            json.dump({**task, "description": "landed"}, f)
        call_ok(wire, "TaskUpdate", {"plan": PLAN_B, "taskId": 1, "description": "marker"})
        wire.notification(updated(URI_B))
        wire.notification(updated(ACTIVE))
        os.replace(temp, folder / "task_1.json")  # the write lands
        wire.notification(updated(URI_A))
        wire.notification(updated(ACTIVE))
        call_ok(wire, "TaskUpdate", {"plan": PLAN_B, "taskId": 1, "description": "marker again"})
        wire.notification(updated(URI_B))
        wire.notification(updated(ACTIVE))
        assert labels(wire.notifications) == [f"updated {u}" for u in (URI_B, ACTIVE, URI_A, ACTIVE, URI_B, ACTIVE)]


def test_stdio_list_changed_once_without_subscribing(tmp_path: Path, root: Path, mode: str) -> None:
    make_plans(root)
    with stdio_server(root, tmp_path / "stderr.txt") as wire:
        call_ok(wire, "PlanCreate", {"title": "New", "analysis": "a", "approach": "b", "date": "2026-06-01"})
        wire.notification(list_changed)
        # A marker after it: a second plan, a second list change.
        call_ok(wire, "PlanCreate", {"title": "Newer", "analysis": "a", "approach": "b", "date": "2026-06-02"})
        wire.notification(list_changed)
        assert labels(wire.notifications) == ["list_changed", "list_changed"]


def test_stdio_20000_subscribes_keep_memory_flat(tmp_path: Path, root: Path, mode: str) -> None:
    """Before the fix each subscribe kept ~2.5 KB (50 MB per 20,000); now the set holds one
    URI however often it is asked for. 100 requests in flight at a time, so what is
    measured is what stays, not a backlog of unread requests."""
    with stdio_server(root, tmp_path / "stderr.txt") as wire:
        subscribe(wire, ACTIVE)
        before = wire.rss_mb()
        for batch in range(200):
            ids = [f"s{batch}-{i}" for i in range(100)]
            request = {"jsonrpc": "2.0", "method": "resources/subscribe", "params": {"uri": ACTIVE}}
            wire.send(b"".join(json.dumps({**request, "id": rid}).encode() + b"\n" for rid in ids))
            for rid in ids:
                assert "result" in wire.answer(rid, timeout=bound(120))
        grown = wire.rss_mb() - before
        assert grown < 8, f"RSS grew by {grown:.1f} MB over 20,000 subscribes"


# -- a real HTTP server: sessions told apart by mcp-session-id ---------------------------


async def test_http_sessions_each_get_one_notice_per_change(tmp_path: Path, root: Path, mode: str) -> None:
    make_plans(root)
    subscribed, bystander = Inbox(), Inbox()
    with serving(tmp_path, "http", root=root) as served:
        url = f"{served.base}/mcp"
        async with client(url, subscribed) as a, client(url, bystander) as b:
            for _ in range(4):
                await a.subscribe_resource(ACTIVE)
            await a.subscribe_resource(URI_A)
            await a.subscribe_resource(URI_B)
            await b.call_tool("TaskList", {"plan": PLAN_A})  # b is a live session too
            await touch(a, PLAN_A)
            await subscribed.wait_for(f"updated {URI_A}")
            await touch(a, PLAN_B)
            await subscribed.wait_for(f"updated {URI_B}")
            assert subscribed.labels[: subscribed.labels.index(f"updated {URI_B}")] == [
                f"updated {URI_A}",
                f"updated {ACTIVE}",
            ]
            created = await b.call_tool("PlanCreate", {"title": "New", "analysis": "a", "approach": "b"})
            assert not created.is_error
            await bystander.wait_for("list_changed")
            await subscribed.wait_for("list_changed")
            mark = len(subscribed.labels)
            await a.unsubscribe_resource(ACTIVE)
            await touch(a, PLAN_B)
            await subscribed.wait_for(f"updated {URI_B}", after=mark)
            await touch(a, PLAN_A)  # a marker: B's round is complete once A's notice is in
            await subscribed.wait_for(f"updated {URI_A}", after=mark)
            assert subscribed.labels[mark:] == [f"updated {URI_B}", f"updated {URI_A}"]
        assert bystander.labels == ["list_changed"], bystander.labels
        assert subscribed.labels.count("list_changed") == 1, subscribed.labels
