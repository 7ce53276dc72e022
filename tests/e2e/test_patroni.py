"""The PostgreSQL store on a highly available cluster: Patroni, etcd, two PostgreSQL 15 nodes,
`synchronous_mode: true` (tests.support.patroni), reached through a multi-host URL.

- A failover round: writers through two real servers, the leader's Patroni and PostgreSQL
  killed with SIGKILL mid-write. Every acknowledged write is on the new primary, every "not
  applied" one absent; writes succeed again within WRITE_AGAIN_BOUND without restarting the
  servers; the change feed (LISTEN) delivers from the new primary; the old node rejoins as a
  standby and no server ever connects to it.
- A COMMIT whose wait for the synchronous standby is cancelled (pg_cancel_backend) is
  reported as done by PostgreSQL, with a WARNING: the store answers UNKNOWN, never applied.
- A COMMIT that waits past its bound (the only standby stopped) is ended and answered
  UNKNOWN, and the plan's row lock is released.

The standby is "stopped" with SIGSTOP (its connections stay open, as a machine that hangs)
under `synchronous_mode_strict`, so that Patroni keeps requiring it and the COMMIT waits.
"""

from __future__ import annotations

import json
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from planning_core import Planner
from planning_core.errors import DatabaseUnconfirmed, DatabaseUnreachable
from planning_core.stores import open_store
from planning_core.stores.postgres import PostgresStore
from planning_core.stores.postgres.feed import changes
from planning_core.stores.postgres.schema import PLANS, TASKS
from tests.e2e.test_shared_store import MODERN, Writer, assert_served_cleanly, client, make_plan, ok
from tests.support.mcp import text_of
from tests.support.patroni import Node, PatroniCluster, patroni_cluster
from tests.support.store_urls import serving_store

WRITE_AGAIN_BOUND = 60.0  # seconds from the kill to a write acknowledged again (Patroni's TTL is 10 s)
FEED_BOUND = 30.0  # seconds for the change feed to deliver from the new primary (it re-LISTENs at its pace)
DEADLINE = 240.0  # seconds for a whole test on a loaded 2-core machine
COMMIT_BOUND = 3.0  # seconds the bounded-commit test lets a COMMIT wait (the store's default is longer)
WAIT_TIMEOUT = 60.0  # seconds for a backend to be seen waiting, a thread to end


@pytest.fixture(scope="module")
def ha() -> Iterator[PatroniCluster]:
    with patroni_cluster() as cluster:
        yield cluster


def dbname_of(url: str) -> str:
    return url.rsplit("/", 1)[1]


def standby_of(ha: PatroniCluster) -> Node:
    leader = ha.leader()
    return next(n for n in ha.nodes.values() if n is not leader)


# -- a failover round -------------------------------------------------------------------------


class Feed:
    """The store's change feed, read in a thread: the plan names it delivers, in a queue."""

    def __init__(self, url: str) -> None:
        self.store = open_store(url)
        self.store.prepare()
        self.stop = threading.Event()
        self.names: queue.Queue[str] = queue.Queue()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        assert isinstance(self.store, PostgresStore)
        for names in self.store.changes(self.stop, wait=1.0):
            for name in names:
                self.names.put(name)

    def delivered(self, plan: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                if self.names.get(timeout=left) == plan:
                    return True
            except queue.Empty:
                return False
        return False

    def drain(self) -> None:
        while not self.names.empty():
            self.names.get_nowait()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=WAIT_TIMEOUT)
        self.store.close()


class Recording:
    """A client that keeps the text of every tool error, to read what a failover looked like."""

    def __init__(self, c: Client) -> None:
        self.c = c
        self.refusals: list[str] = []

    async def call_tool(self, name: str, args: dict[str, Any]) -> CallToolResult:
        r = await self.c.call_tool(name, args)
        if r.is_error:
            self.refusals.append(text_of(r))
        return r


def stored_on(ha: PatroniCluster, node: Node, dbname: str, plan: str) -> set[str]:
    """The subjects of the plan's tasks as `node`'s PostgreSQL holds them (a standby too)."""
    with ha.on(node, dbname) as conn:
        rows = conn.execute(f"SELECT doc FROM {TASKS} WHERE plan = %s", (plan,)).fetchall()
    return {str(json.loads(doc)["subject"]) for (doc,) in rows}


def server_connections(ha: PatroniCluster, node: Node) -> int:
    with ha.on(node, "postgres") as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'planning-mcp%'"
        ).fetchone()
    return int(row[0]) if row else 0


async def test_a_failover_loses_no_acknowledged_write_and_the_servers_follow_the_primary(
    ha: PatroniCluster, tmp_path: Path
) -> None:
    ha.wait(ha.healthy, "a leader with a synchronous standby")
    url = ha.create_database()
    dbname = dbname_of(url)
    with (
        serving_store(tmp_path, "http", url, name="a") as a,
        serving_store(tmp_path, "http", url, name="b") as b,
        anyio.fail_after(DEADLINE),
    ):
        assert "target_session_attrs=read-write" in a.stderr()
        async with client(a, MODERN) as on_a, client(b, MODERN) as on_b:
            plan = await make_plan(on_a, "failover")
            recorded = [Recording(on_a), Recording(on_b)]
            writers = [Writer(cast(Client, r), plan) for r in recorded]
            writers[1]._n = 10_000  # subjects unique across both writers
            listener = Feed(url)
            old = ha.leader()
            killed = anyio.Event()
            killed_at: list[float] = []
            again_after: list[float] = []

            async def write(w: Writer) -> None:
                while not killed.is_set():
                    await w.create()
                while not await w.create():
                    await anyio.sleep(0.2)  # an agent's retry interval, not a synchronisation
                again_after.append(time.monotonic() - killed_at[0])
                for _ in range(5):
                    assert await w.create(), "a write failed after the servers had written to the new primary"

            async with anyio.create_task_group() as tg:
                for w in writers:
                    tg.start_soon(write, w)
                with anyio.fail_after(DEADLINE / 2):
                    while sum(len(w.acknowledged) for w in writers) < 20:
                        await anyio.sleep(0.05)  # poll the writers' progress, bounded
                killed_at.append(time.monotonic())
                await anyio.to_thread.run_sync(ha.kill, old)
                killed.set()
            new = ha.leader()
            assert new is not old
            in_flight = sum(len(w.unknown) + len(w.not_applied) for w in writers)
            print(
                f"failover: writes acknowledged again after {max(again_after):.1f}s "
                f"({', '.join(f'{t:.1f}' for t in sorted(again_after))}); {in_flight} writes in flight "
                f"answered unknown/not applied; {sum(len(w.acknowledged) for w in writers)} acknowledged"
            )
            assert max(again_after) <= WRITE_AGAIN_BOUND
            refusals = [text for r in recorded for text in r.refusals]
            print("failover: what the writers were told:", *sorted(set(refusals)), sep="\n  ")
            assert not [t for t in refusals if "stayed busy" in t], "an unreachable database reported as busy"
            stored = stored_on(ha, new, dbname, plan)
            for w in writers:
                assert w.acknowledged <= stored, f"acknowledged writes lost: {sorted(w.acknowledged - stored)}"
                assert not (w.not_applied & stored), f"not applied, yet stored: {sorted(w.not_applied & stored)}"

            # The change feed LISTENs on the new primary by itself.
            listener.drain()
            heard = False
            deadline = time.monotonic() + FEED_BOUND
            while not heard and time.monotonic() < deadline:
                await ok(on_b, "TaskCreate", {"plan": plan, "subject": "heard", "description": "d"})
                heard = await anyio.to_thread.run_sync(listener.delivered, plan, 2.0)
            assert heard, "the change feed delivered nothing from the new primary"

            # The old node rejoins as a standby; the servers never connect to it.
            ha.start(old)
            rejoined = "the old leader back as the synchronous standby"
            await anyio.to_thread.run_sync(ha.wait, lambda: ha.healthy() and ha.leader() is new, rejoined)
            with ha.on(old, "postgres") as conn:
                assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
            for w in writers:
                for _ in range(3):
                    assert await w.create()
            acknowledged = set().union(*(w.acknowledged for w in writers))
            caught_up = "the rejoined standby caught up"
            await anyio.to_thread.run_sync(ha.wait, lambda: acknowledged <= stored_on(ha, old, dbname, plan), caught_up)
            assert server_connections(ha, old) == 0, "a server connected to the old primary, now a standby"
            assert server_connections(ha, new) > 0
        listener.close()
        assert_served_cleanly(a, b)


# -- commits the synchronous standby never confirmed ---------------------------------------------


@contextmanager
def standby_stopped(ha: PatroniCluster) -> Iterator[Node]:
    """The standby frozen (SIGSTOP) under synchronous_mode_strict: COMMITs on the leader wait."""
    ha.wait(ha.healthy, "a leader with a synchronous standby")
    leader, standby = ha.leader(), standby_of(ha)
    leader.api("/config", "PATCH", {"synchronous_mode_strict": True})
    ha.wait(lambda: leader.api("/config").get("synchronous_mode_strict") is True, "strict synchronous mode")
    ha.pause(standby, signal.SIGSTOP)
    try:
        yield leader
    finally:
        ha.pause(standby, signal.SIGCONT)
        leader.api("/config", "PATCH", {"synchronous_mode_strict": None})
        ha.wait(ha.healthy, "the standby back in sync")


def in_thread(call: Callable[[], object]) -> tuple[threading.Thread, list[BaseException | object]]:
    got: list[BaseException | object] = []

    def run() -> None:
        try:
            got.append(call())
        except BaseException as e:  # the test looks at what the call raised
            got.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, got


def waiting_commit(ha: PatroniCluster, leader: Node, dbname: str) -> int:
    """The pid of the backend whose COMMIT waits for the synchronous standby (bounded)."""
    found: list[int] = []

    def seen() -> bool:
        with ha.on(leader, "postgres") as conn:
            rows = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND wait_event = 'SyncRep'", (dbname,)
            ).fetchall()
        found.extend(int(r[0]) for r in rows)
        return bool(found)

    ha.wait(seen, "a COMMIT waiting for the synchronous standby", WAIT_TIMEOUT)
    return found[0]


def new_plan(url: str) -> tuple[PostgresStore, Planner, str]:
    store = open_store(url)
    assert isinstance(store, PostgresStore)
    store.prepare()
    planner = Planner(store)
    return store, planner, planner.create_plan("Sync", analysis="a", approach="b", tasks=[{"subject": "before"}]).name


def test_a_commit_whose_wait_for_the_standby_was_cancelled_is_unknown(ha: PatroniCluster) -> None:
    url = ha.create_database()
    store, planner, plan = new_plan(url)
    try:
        with standby_stopped(ha) as leader:
            thread, got = in_thread(lambda: planner.create_task(plan, "unconfirmed"))
            pid = waiting_commit(ha, leader, dbname_of(url))
            with ha.on(leader, "postgres") as conn:
                assert conn.execute("SELECT pg_cancel_backend(%s)", (pid,)).fetchone() == (True,)
            thread.join(WAIT_TIMEOUT)
            assert got and isinstance(got[0], DatabaseUnconfirmed), got
            said = str(got[0])
            assert "UNKNOWN" in said and "Read the task back" in said and "synchronous replication" in said, said
    finally:
        store.close()


def test_a_commit_waiting_past_its_bound_is_ended_unknown_and_the_plan_unlocked(ha: PatroniCluster) -> None:
    url = ha.create_database()
    store, planner, plan = new_plan(url)
    store.db.commit_wait = COMMIT_BOUND
    try:
        with standby_stopped(ha) as leader:
            started = time.monotonic()
            with pytest.raises(DatabaseUnconfirmed) as raised:
                planner.create_task(plan, "past the bound")
            took = time.monotonic() - started
            assert COMMIT_BOUND <= took <= COMMIT_BOUND + WAIT_TIMEOUT, took
            assert "UNKNOWN" in str(raised.value) and f"over {COMMIT_BOUND:g}s" in str(raised.value)
            with ha.on(leader, dbname_of(url)) as conn:  # rolled back: a COMMIT here would wait too
                conn.execute("BEGIN")
                locked = conn.execute(f"SELECT name FROM {PLANS} WHERE name = %s FOR UPDATE NOWAIT", (plan,))
                assert locked.fetchone() == (plan,)  # no COMMIT holds the plan's row any longer
                conn.execute("ROLLBACK")
    finally:
        store.close()


def test_the_change_feed_on_a_standby_is_retried_not_raised(ha: PatroniCluster) -> None:
    """LISTEN on a standby fails with ReadOnlySqlTransaction: the feed treats it as a lost
    connection (a StorageError: the server polls, and the feed tries again), never a crash."""
    ha.wait(ha.healthy, "a leader with a synchronous standby")
    standby = standby_of(ha)
    store = PostgresStore(f"postgresql://postgres@127.0.0.1:{standby.pg_port}/postgres")
    try:
        with pytest.raises(DatabaseUnreachable, match="standby"):
            next(changes(store.db, threading.Event(), 1.0))
    finally:
        store.close()
