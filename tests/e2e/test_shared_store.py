"""Two real `planning-mcp serve --transport http` children on ONE PostgreSQL database:
a change made through one reaches the other's subscribed clients within a second
(2025 resources/subscribe and 2026 subscriptions/listen); a 2026 client whose requests
alternate between them keeps one todo list, one current plan and one reminder clock; an
unreachable database stops a command at start with one line; a database lost mid-call is a
tool error that says what became of the change, the server reconnects by itself, and a
restart costs no acknowledged write. The database is real (tests.support.pg)."""

from __future__ import annotations

import time
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psycopg
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, ResourceUpdatedNotification

from planning_core.session import PLAN_REMINDER, TODO_REMINDER
from planning_core.stores import open_store
from planning_core.stores.postgres.schema import SESSIONS
from tests.support.mcp import connect, text_of
from tests.support.pg import cluster, fresh_database_url
from tests.support.procs import Served, free_port, run_cli
from tests.support.store_urls import serving_store, stdio_params
from tests.support.waits import bound

FEED_BOUND = 1.0  # seconds: a change reaches every other server's subscribers
HANDSHAKE = bound(15)  # seconds for the first notice, which proves the feed is live end to end
DEADLINE = bound(60)  # seconds for a whole test: every wait below is bounded by it
MODERN = "2026-07-28"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
# What a tool error says became of a change when the database went away (planning_core.errors).
APPLIED, NOT_APPLIED, UNKNOWN = "WAS applied", "NOT applied", "UNKNOWN"
NOTHING_CHANGED = "Nothing was changed"  # unreachable, or a read: not applied either


@contextmanager
def two_servers(tmp_path: Path, url: str) -> Iterator[tuple[Served, Served]]:
    with serving_store(tmp_path, "http", url, name="a") as a, serving_store(tmp_path, "http", url, name="b") as b:
        yield a, b


@asynccontextmanager
async def client(srv: Served, mode: str, **kwargs: Any) -> AsyncIterator[Client]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # resources/subscribe is deprecated at 2026 (MCPDeprecationWarning)
        async with Client(f"{srv.base}/mcp", mode=mode, **kwargs) as c:
            yield c


async def ok(c: Client, tool: str, args: dict[str, Any]) -> CallToolResult:
    r = await c.call_tool(tool, args)
    assert not r.is_error, text_of(r)
    return r


async def make_plan(c: Client, slug: str, tasks: int = 0) -> str:
    args = {"title": slug.title(), "analysis": "a", "approach": "b", "name": slug}
    r = await ok(c, "PlanCreate", {**args, "tasks": [{"subject": f"t{n}", "description": "d"} for n in range(tasks)]})
    return str(r.structured_content["plan"]["name"])


def assert_served_cleanly(*servers: Served) -> None:
    for srv in servers:
        assert srv.proc.poll() is None, f"a server exited ({srv.proc.returncode}): {srv.stderr()}"
        assert "Traceback" not in srv.stderr(), srv.stderr()


# -- the change feed across servers --------------------------------------------------------


async def test_a_2025_subscriber_on_one_server_hears_a_change_made_through_the_other(tmp_path: Path) -> None:
    heard: list[tuple[str, float]] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        nonlocal arrived
        if isinstance(message, ResourceUpdatedNotification):
            heard.append((str(message.params.uri), time.monotonic()))
            arrived.set()

    with two_servers(tmp_path, fresh_database_url()) as (a, b), anyio.fail_after(DEADLINE):
        async with client(a, MODERN) as writer, client(b, "legacy", message_handler=on_message) as listener:
            plan = await make_plan(writer, "shared")
            uri = f"plans://{plan}"
            await listener.subscribe_resource(uri)
            # The handshake: changes until B's subscriber hears one (B's LISTEN may start
            # after its startup line); from then on the feed is live end to end.
            with anyio.fail_after(HANDSHAKE):
                while not heard:
                    await ok(writer, "TaskCreate", {"plan": plan, "subject": "warm-up", "description": "d"})
                    with anyio.move_on_after(1):
                        await arrived.wait()
                # Let notices of earlier changes come first (see assert_heard_within_bound).
                while heard:
                    heard.clear()
                    arrived = anyio.Event()
                    with anyio.move_on_after(FEED_BOUND):
                        await arrived.wait()
            for n in range(3):
                heard.clear()
                arrived = anyio.Event()
                sent = time.monotonic()
                await ok(writer, "TaskCreate", {"plan": plan, "subject": f"From A {n}", "description": "d"})
                with anyio.fail_after(FEED_BOUND * 3):  # fail with the figure below, not a bare timeout
                    await arrived.wait()
                (got, at), *_ = heard
                assert got == uri
                assert at - sent <= FEED_BOUND, f"B's subscriber heard A's change after {at - sent:.2f}s"
            board = text_of(await listener.call_tool("TaskList", {"plan": plan}))
            assert "[pending] From A 2" in board
        assert_served_cleanly(a, b)


async def test_a_2026_listener_on_one_server_hears_a_change_made_through_the_other(tmp_path: Path) -> None:
    with two_servers(tmp_path, fresh_database_url()) as (a, b), anyio.fail_after(DEADLINE):
        async with client(a, MODERN) as writer, client(b, MODERN) as listener:
            plan = await make_plan(writer, "listened")
            uri = f"plans://{plan}"
            async with listener.listen(resource_subscriptions=[uri]) as events:
                await assert_heard_within_bound(writer, events, plan)
        assert_served_cleanly(a, b)


async def assert_heard_within_bound(writer: Client, events: Any, plan: str) -> None:
    """Changes through `writer` until `events` has one (the feed is live: B's LISTEN may
    start after its startup line, or come back after the database did), then three more,
    each heard within FEED_BOUND of its call."""
    uri = f"plans://{plan}"
    with anyio.fail_after(HANDSHAKE):
        heard = False
        while not heard:
            await ok(writer, "TaskCreate", {"plan": plan, "subject": "warm-up", "description": "d"})
            with anyio.move_on_after(1):
                await next_event_for(events, uri)
                heard = True
        # Notices of earlier changes may still be queued: let them come, so that each one
        # timed below is the notice of the change made just before it.
        quiet = False
        while not quiet:
            with anyio.move_on_after(FEED_BOUND) as window:
                await next_event_for(events, uri)
            quiet = window.cancelled_caught
    for n in range(3):
        sent = time.monotonic()
        await ok(writer, "TaskCreate", {"plan": plan, "subject": f"heard {n}", "description": "d"})
        with anyio.fail_after(FEED_BOUND * 3):  # fail with the figure below, not a bare timeout
            await next_event_for(events, uri)
        took = time.monotonic() - sent
        assert took <= FEED_BOUND, f"B's listener heard A's change after {took:.2f}s"


async def next_event_for(events: Any, uri: str) -> None:
    async for event in events:
        if getattr(event, "uri", None) == uri:
            return
    raise AssertionError(f"the event stream ended before an event for {uri}")


# -- one session across replicas -------------------------------------------------------------


def reminders(result: CallToolResult) -> list[str]:
    return [line for line in text_of(result).splitlines() if line.startswith("<reminder>")]


async def test_a_2026_client_alternating_between_servers_keeps_one_session(tmp_path: Path) -> None:
    """2026-07-28 has no session header: both servers key the client's requests as the one
    default session, kept in the database. Two SDK clients, one per server,
    are to each server exactly one client whose requests alternate between them."""
    with two_servers(tmp_path, fresh_database_url()) as (a, b), anyio.fail_after(DEADLINE):
        async with client(a, MODERN) as on_a, client(b, MODERN) as on_b:
            await make_plan(on_a, "first", tasks=1)
            second = await make_plan(on_b, "second", tasks=2)  # B made it: now the current plan
            # One current plan: A, asked without a plan, answers about the plan B made current.
            listed = await ok(on_a, "TaskList", {})
            assert text_of(listed).splitlines()[0] == f"{second} [0/2 done]"
            await ok(on_a, "TaskUpdate", {"taskId": 2, "status": "in_progress"})  # plan round 0
            got = text_of(await ok(on_b, "TaskGet", {"plan": second, "taskId": 2}))  # plan round 1
            assert "Status: in_progress" in got.splitlines()
            # One todo list: written through B, unfinished; its reminder comes from A.
            await ok(on_b, "todo", {"items": [{"content": "x", "status": "pending"}]})  # plan 2, todo 0
            # One reminder clock: the rounds alternate servers; the 3rd quiet todo round and
            # the 5th quiet plan round remind, whichever server answers them.
            rounds: list[tuple[Client, set[str]]] = [
                (on_a, set()),  # plan 3, todo 1
                (on_b, set()),  # plan 4, todo 2
                (on_a, {TODO_REMINDER, PLAN_REMINDER}),  # plan 5, todo 3
                (on_b, set()),  # plan 6, todo 4
                (on_a, set()),  # plan 7, todo 5
                (on_b, {TODO_REMINDER}),  # plan 8, todo 6
                (on_a, set()),  # plan 9, todo 7
                (on_b, {PLAN_REMINDER}),  # plan 10, todo 8
            ]
            for n, (c, due) in enumerate(rounds, start=1):
                said = reminders(await ok(c, "PlanList", {}))
                assert set(said) == due and len(said) == len(due), f"quiet round {n}: {said}"
        assert_served_cleanly(a, b)


async def test_stdio_servers_on_one_database_each_keep_their_own_session_in_process(tmp_path: Path) -> None:
    """A stdio process is one session of its own: two stdio servers on one
    database share the plans, never a todo list or a current plan, and no session of theirs
    is kept in the database (nobody else could ever name it; a row would cost every call
    round trips and be left behind)."""
    url = fresh_database_url()
    with anyio.fail_after(DEADLINE):
        async with (
            connect(stdio_params(url, tmp_path), tmp_path / "one.stderr", "legacy") as one,
            connect(stdio_params(url, tmp_path), tmp_path / "two.stderr", "legacy") as two,
        ):
            first = await make_plan(one, "first", tasks=1)
            second = await make_plan(two, "second", tasks=2)
            # Each server's current plan is the one it made (a shared session would say "second").
            assert text_of(await ok(one, "TaskList", {})).splitlines()[0] == f"{first} [0/1 done]"
            assert text_of(await ok(two, "TaskList", {})).splitlines()[0] == f"{second} [0/2 done]"
            await ok(one, "todo", {"items": [{"content": "only in one", "status": "in_progress"}]})
            listed = text_of(await ok(two, "todo", {"items": [{"content": "only in two", "status": "pending"}]}))
            assert "only in one" not in listed
            await ok(two, "TaskCreate", {"subject": "seen by both", "description": "d"})
            assert "seen by both" in text_of(await ok(one, "TaskList", {"plan": second}))
    with psycopg.connect(url) as conn:
        assert conn.execute(f"SELECT key FROM {SESSIONS}").fetchall() == []


def test_a_2025_session_belongs_to_the_server_that_opened_it(tmp_path: Path) -> None:
    """A 2025 mcp-session-id is the opening server's: the other answers 404 (the client
    opens a new session there), never someone else's state. 2025 clients behind a load
    balancer need sticky sessions; 2026 clients do not (the test above)."""
    with two_servers(tmp_path, fresh_database_url()) as (a, b), httpx2.Client(timeout=bound(20)) as http:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        opened = http.post(f"{a.base}/mcp", json=rpc(0, "initialize", init), headers=ACCEPT)
        assert opened.status_code == 200, opened.text
        headers = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        elsewhere = http.post(f"{b.base}/mcp", json=rpc(1, "tools/list"), headers=headers)
        assert elsewhere.status_code == 404, elsewhere.text
        assert_served_cleanly(a, b)


def rpc(rid: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params is not None else {})}


# -- the database unreachable, lost, restarted -------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [[], ["serve", "--transport", "http", "--port", "0"], ["serve", "--transport", "sse", "--port", "0"], ["status"]],
    ids=["stdio", "http", "sse", "status"],
)
def test_an_unreachable_database_stops_a_command_with_one_line(command: list[str]) -> None:
    port = free_port()  # nothing listens there
    r = run_cli([*command, "--store", f"postgresql://planner:secret@127.0.0.1:{port}/plans"], timeout=bound(60))
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("planning-mcp: "), r.stderr
    assert f"127.0.0.1:{port}" in lines[0]
    assert "secret" not in r.stderr and "Traceback" not in r.stderr


def outcome(result: CallToolResult) -> str:
    """What a tool error says became of the change: exactly one of the outcomes."""
    said = text_of(result)
    found = [o for o in (APPLIED, NOT_APPLIED, UNKNOWN, NOTHING_CHANGED) if o in said]
    assert len(found) == 1, f"a lost database must say applied / not applied / unknown: {said!r}"
    assert "Traceback" not in said and "secret" not in said
    return NOT_APPLIED if found[0] == NOTHING_CHANGED else found[0]


async def tool_call(c: Client, tool: str, args: dict[str, Any]) -> CallToolResult:
    """A tool's answer; a JSON-RPC error instead (the SDK's "Internal server error") fails
    here by name: a lost database must be a tool error the agent can read and act on."""
    try:
        return await c.call_tool(tool, args)
    except MCPError as e:
        raise AssertionError(f"{tool} answered a JSON-RPC error ({e.code}: {e.message}), not a tool error") from None


def stored_subjects(url: str, plan: str) -> set[str]:
    store = open_store(url)
    try:
        store.prepare()
        return {t.subject for t in store.snapshot(plan).tasks.values()}
    finally:
        store.close()


class Writer:
    """TaskCreate calls with unique subjects, sorted by what the answer said of each."""

    def __init__(self, c: Client, plan: str) -> None:
        self.c, self.plan = c, plan
        self.acknowledged: set[str] = set()
        self.not_applied: set[str] = set()
        self.unknown: set[str] = set()
        self._n = 0

    async def create(self) -> bool:
        self._n += 1
        subject = f"write {self._n}"
        r = await tool_call(self.c, "TaskCreate", {"plan": self.plan, "subject": subject, "description": "d"})
        if not r.is_error:
            self.acknowledged.add(subject)
            return True
        {APPLIED: self.acknowledged, NOT_APPLIED: self.not_applied, UNKNOWN: self.unknown}[outcome(r)].add(subject)
        return False

    async def until_served(self, timeout: float) -> None:
        """Calls until one succeeds: the server reconnected by itself (bounded)."""
        with anyio.fail_after(timeout):
            while not await self.create():
                await anyio.sleep(0.2)  # a retry interval, as an agent's; not a synchronisation

    def check(self, url: str) -> None:
        stored = stored_subjects(url, self.plan)
        assert self.acknowledged <= stored, f"acknowledged writes lost: {sorted(self.acknowledged - stored)}"
        assert not (self.not_applied & stored), f"said not applied, yet stored: {sorted(self.not_applied & stored)}"


async def test_terminated_connections_cost_nothing_and_the_server_goes_on(tmp_path: Path) -> None:
    url = fresh_database_url()
    dbname = url.rsplit("/", 1)[1]
    with serving_store(tmp_path, "http", url) as srv, anyio.fail_after(DEADLINE):
        async with client(srv, MODERN) as c:
            w = Writer(c, await make_plan(c, "terminated"))
            for _ in range(3):
                assert await w.create()
            for _ in range(3):
                assert cluster().terminate_backends(dbname) > 0  # the pool's and the LISTEN connection
                await w.create()  # answered: done, or an error saying what became of it
                await w.until_served(DEADLINE / 2)
            w.check(url)
        assert_served_cleanly(srv)


async def test_a_stopped_database_is_a_tool_error_and_the_server_reconnects(tmp_path: Path) -> None:
    url = fresh_database_url()
    pg = cluster()
    with serving_store(tmp_path, "http", url) as srv, anyio.fail_after(DEADLINE * 2):
        async with client(srv, MODERN) as c:
            w = Writer(c, await make_plan(c, "stopped"))
            assert await w.create()
            await anyio.to_thread.run_sync(pg.stop)
            try:
                r = await tool_call(c, "TaskCreate", {"plan": w.plan, "subject": "while down", "description": "d"})
                assert r.is_error, text_of(r)
                assert outcome(r) == NOT_APPLIED, text_of(r)
                listed = await tool_call(c, "TaskList", {"plan": w.plan})
                assert listed.is_error and outcome(listed) == NOT_APPLIED, text_of(listed)
            finally:
                await anyio.to_thread.run_sync(pg.start)
            await w.until_served(DEADLINE)
            assert "while down" not in stored_subjects(url, w.plan)
            w.check(url)
        assert_served_cleanly(srv)


async def test_a_postgresql_restart_costs_no_acknowledged_write(tmp_path: Path) -> None:
    url = fresh_database_url()
    pg = cluster()
    with two_servers(tmp_path, url) as (a, b), anyio.fail_after(DEADLINE * 2):
        async with client(a, MODERN) as on_a, client(b, MODERN) as on_b:
            plan = await make_plan(on_a, "restarted")
            writers = [Writer(on_a, plan), Writer(on_b, plan)]
            writers[1]._n = 10_000  # subjects unique across both writers
            restarted = anyio.Event()

            async def write(w: Writer) -> None:
                while not restarted.is_set():
                    await w.create()
                await w.until_served(DEADLINE)
                for _ in range(5):
                    assert await w.create()

            async with anyio.create_task_group() as tg:
                for w in writers:
                    tg.start_soon(write, w)
                with anyio.fail_after(DEADLINE):
                    while sum(len(w.acknowledged) for w in writers) < 10:
                        await anyio.sleep(0.05)  # poll the writers' progress, bounded
                await anyio.to_thread.run_sync(pg.restart)
                restarted.set()
            for w in writers:
                w.check(url)
            total = sum(len(w.acknowledged) for w in writers)
            listed = text_of(await ok(on_b, "TaskList", {"plan": plan, "limit": 1000}))
            assert listed.splitlines()[0].endswith(f"/{len(stored_subjects(url, plan))} done]"), listed
            assert total >= 20
        assert_served_cleanly(a, b)


async def test_the_change_feed_comes_back_after_a_postgresql_restart(tmp_path: Path) -> None:
    """NOTIFY is lost while a listener is disconnected: after the restart B listens again
    by itself, and changes through A reach B's listener within the bound once more."""
    pg = cluster()
    with two_servers(tmp_path, fresh_database_url()) as (a, b), anyio.fail_after(DEADLINE * 2):
        async with client(a, MODERN) as writer, client(b, MODERN) as listener:
            plan = await make_plan(writer, "relistened")
            async with listener.listen(resource_subscriptions=[f"plans://{plan}"]) as events:
                await assert_heard_within_bound(writer, events, plan)
                await anyio.to_thread.run_sync(pg.restart)
                await Writer(writer, plan).until_served(DEADLINE)
                await assert_heard_within_bound(writer, events, plan)
        assert_served_cleanly(a, b)
