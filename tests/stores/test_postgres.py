"""The PostgreSQL store against a real server (tests.support.pg): what only it must do.

The behaviour every store shares is the core suite's (parametrised over the stores);
here: many servers at once on one database, connections killed and the server
restarted under it, an unreachable database, the change feed across processes, two
hosts racing opposite edges, shared sessions, and exact copies to and from files.
Other processes are real processes (multiprocessing, spawn), synchronised by barriers
and pipes, never by sleeps.
"""

from __future__ import annotations

import multiprocessing as mp
import socket
import threading
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest

from planning_core import Planner
from planning_core.errors import (
    DatabaseLost,
    DatabaseUnreachable,
    DependencyCycle,
    PlanBusy,
    PlanExists,
    SessionBusy,
    StorageError,
)
from planning_core.store import ANY_PLAN
from planning_core.stores.files import FileStore
from planning_core.stores.postgres import PostgresStore
from planning_core.stores.postgres.db import POOL_MAX
from planning_core.stores.postgres.schema import SCHEMA_VERSION, SESSIONS, TASKS, VERSIONS
from tests.support.files import copied_state
from tests.support.pg import cluster, fresh_database_url
from tests.support.waits import bound

SPAWN = mp.get_context("spawn")  # children start clean: no pool threads or sockets inherited
CHILD_TIMEOUT = bound(60)  # seconds for any child's answer on a loaded 2-core machine


def dbname(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


@pytest.fixture
def url() -> str:
    return fresh_database_url()


@pytest.fixture
def pg_store(url: str) -> Iterator[PostgresStore]:
    s = PostgresStore(url)
    s.prepare()
    yield s
    s.close()


def new_plan(store: PostgresStore, tasks: int = 0, title: str = "Shared plan") -> str:
    return Planner(store).create_plan(title, tasks=[{"subject": f"t{i}"} for i in range(1, tasks + 1)]).name


# -- children (module level: spawn imports them by name) ----------------------------------


def _prepare_child(url: str, barrier: Any, out: Connection) -> None:
    barrier.wait()
    try:
        s = PostgresStore(url)
        s.prepare()
        s.close()
        out.send("ok")
    except Exception as e:  # reported to the test, which shows it
        out.send(f"{type(e).__name__}: {e}")


def _edge_child(url: str, plan: str, pairs: list[tuple[int, int]], barrier: Any, out: Connection) -> None:
    """For each (task, blocker): wait for the other process at the barrier, then link."""
    s = PostgresStore(url)
    s.prepare()
    planner = Planner(s)
    results = []
    for task, blocker in pairs:
        barrier.wait()
        try:
            planner.update_task(plan, task, add_blocked_by=[blocker])
            results.append("linked")
        except DependencyCycle:
            results.append("cycle")
    s.close()
    out.send(results)


def _writer_child(url: str, plan: str, cmd: Connection) -> None:
    s = PostgresStore(url)
    s.prepare()
    planner = Planner(s)
    cmd.send("ready")
    while (subject := cmd.recv()) is not None:
        cmd.send(planner.create_task(plan, subject).id)
    s.close()


# -- the schema --------------------------------------------------------------------------


def test_ten_servers_starting_at_once_on_an_empty_database_make_one_schema(url: str) -> None:
    barrier = SPAWN.Barrier(10)
    pipes = [SPAWN.Pipe(duplex=False) for _ in range(10)]
    procs = [SPAWN.Process(target=_prepare_child, args=(url, barrier, w)) for _, w in pipes]
    for p in procs:
        p.start()
    answers = [r.recv() if r.poll(CHILD_TIMEOUT) else "no answer" for r, _ in pipes]
    for p in procs:
        p.join(CHILD_TIMEOUT)
    assert answers == ["ok"] * 10
    with psycopg.connect(url) as conn:
        versions = conn.execute(f"SELECT version FROM {VERSIONS}").fetchall()
    assert versions == [(v,) for v in range(1, SCHEMA_VERSION + 1)]
    s = PostgresStore(url)
    try:
        assert new_plan(s, tasks=2).endswith("shared-plan")  # the schema works
    finally:
        s.close()


# -- connections lost, the server restarted ---------------------------------------------------


def test_a_write_after_every_connection_is_terminated_works_and_loses_nothing(
    pg_store: PostgresStore, url: str
) -> None:
    planner = Planner(pg_store)
    plan = new_plan(pg_store, tasks=3)
    before = planner.create_task(plan, "before")
    assert cluster().terminate_backends(dbname(url)) >= 1  # the pool's idle connection(s)
    after = planner.create_task(plan, "after", blocked_by=[before.id])
    assert cluster().terminate_backends(dbname(url)) >= 1
    snap = pg_store.snapshot(plan)  # a read after the kill works too
    assert sorted(snap.tasks) == [1, 2, 3, before.id, after.id]
    assert snap.tasks[before.id].blocks == [after.id]


def test_a_connection_lost_inside_a_write_says_the_change_was_not_applied(pg_store: PostgresStore, url: str) -> None:
    plan = new_plan(pg_store, tasks=1)
    task = pg_store.get_task(plan, 1)
    task.subject = "changed"
    with pytest.raises(DatabaseLost) as lost, pg_store.transaction(plan) as txn:
        txn.put(task)
        cluster().terminate_backends(dbname(url))
    assert lost.value.outcome == "not applied"
    assert "NOT applied" in str(lost.value) and "safe to retry" in str(lost.value)
    assert pg_store.get_task(plan, 1).subject == "t1"  # and the store serves again


def test_a_connection_lost_while_committing_says_the_outcome_is_unknown(pg_store: PostgresStore, url: str) -> None:
    """A deferred trigger kills the writer's own backend at COMMIT: the client cannot know
    whether the commit happened, and must say so (never retry it blindly)."""
    plan = new_plan(pg_store, tasks=1)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION die_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.doc LIKE '%die-at-commit%' THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF; "
            "RETURN NULL; END $$"
        )
        conn.execute(
            f"CREATE CONSTRAINT TRIGGER die AFTER INSERT OR UPDATE ON {TASKS} DEFERRABLE INITIALLY DEFERRED "
            "FOR EACH ROW EXECUTE FUNCTION die_at_commit()"
        )
    planner = Planner(pg_store)
    with pytest.raises(DatabaseLost) as lost:
        planner.create_task(plan, "die-at-commit")
    assert lost.value.outcome == "unknown"
    assert "UNKNOWN" in str(lost.value) and "check with TaskGet/TaskList before retrying" in str(lost.value)
    assert planner.create_task(plan, "the store serves on").subject == "the store serves on"


def test_a_postgresql_restart_mid_run_costs_no_acknowledged_write(pg_store: PostgresStore, url: str) -> None:
    plan = new_plan(pg_store)
    acked: list[int] = []
    failures: list[Exception] = []
    unexpected: list[Exception] = []
    done_before, done_after, stop = threading.Event(), threading.Event(), threading.Event()
    restarted = threading.Event()

    def write() -> None:
        planner = Planner(PostgresStore(url))
        try:
            n = 0
            while not stop.is_set():
                n += 1
                try:
                    acked.append(planner.create_task(plan, f"task {n}").id)
                except (DatabaseLost, DatabaseUnreachable) as e:  # the outage: said, not crashed
                    failures.append(e)
                    continue
                except Exception as e:  # anything else fails the test (and stops the wait)
                    unexpected.append(e)
                    done_before.set()
                    done_after.set()
                    return
                if len(acked) >= 20:
                    done_before.set()
                if restarted.is_set() and len([i for i in acked if i > restart_mark[0]]) >= 20:
                    done_after.set()
        finally:
            planner.store.close()

    restart_mark = [0]
    writers = [threading.Thread(target=write) for _ in range(3)]
    for w in writers:
        w.start()
    try:
        assert done_before.wait(CHILD_TIMEOUT)
        restart_mark[0] = max(acked)
        cluster().restart()
        restarted.set()
        assert done_after.wait(CHILD_TIMEOUT), "the writers did not recover after the restart"
    finally:
        stop.set()
        for w in writers:
            w.join(CHILD_TIMEOUT)
    assert unexpected == []
    fresh = PostgresStore(url)
    try:
        stored = fresh.snapshot(plan).tasks
    finally:
        fresh.close()
    assert set(acked) <= set(stored), f"acknowledged but missing: {sorted(set(acked) - set(stored))}"
    assert len(acked) == len(set(acked))  # ids unique
    for e in failures:  # each says what became of its change
        if isinstance(e, DatabaseLost):
            assert e.outcome in ("not applied", "unknown"), e
        else:
            assert "Nothing was changed" in str(e), e


def test_an_unreachable_database_is_named_without_its_password() -> None:
    with socket.socket() as probe:  # a port nothing listens on: bound, then given back
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    s = PostgresStore(f"postgresql://planner:s3cret-pw@127.0.0.1:{port}/plans")
    try:
        with pytest.raises(DatabaseUnreachable) as e:
            s.prepare()
        message = str(e.value)
        assert f"plans on 127.0.0.1:{port}" in message and "s3cret-pw" not in message
        assert "\n" not in message and "Nothing was changed" in message
        assert isinstance(e.value, StorageError)
        assert "s3cret-pw" not in s.describe() and s.describe().startswith("postgresql://planner:***@127.0.0.1")
        with pytest.raises(DatabaseUnreachable):
            s.active_plans()
    finally:
        s.close()


def test_waiting_for_a_plan_held_by_another_server_longer_than_the_lock_timeout_is_plan_busy(url: str) -> None:
    first, second = PostgresStore(url), PostgresStore(url, lock_timeout=0.3)
    try:
        plan = new_plan(first, tasks=1)
        holding, release = threading.Event(), threading.Event()

        def hold() -> None:
            with first.transaction(plan):
                holding.set()
                release.wait(CHILD_TIMEOUT)

        holder = threading.Thread(target=hold)
        holder.start()
        assert holding.wait(CHILD_TIMEOUT)
        started = time.monotonic()
        with pytest.raises(PlanBusy):
            Planner(second).create_task(plan, "blocked")
        assert time.monotonic() - started < bound(5)
        release.set()
        holder.join(CHILD_TIMEOUT)
        assert Planner(second).create_task(plan, "now").id == 2
    finally:
        first.close()
        second.close()


# -- the change feed ---------------------------------------------------------------------


def test_a_write_from_another_process_wakes_the_feed_within_a_second_even_after_its_connection_is_killed(
    pg_store: PostgresStore, url: str
) -> None:
    plan = new_plan(pg_store)
    stop = threading.Event()
    seen: list[tuple[float, set[str]]] = []
    listening = threading.Event()

    def listen() -> None:
        for names in pg_store.changes(stop, 0.2):
            seen.append((time.monotonic(), names))
            listening.set()

    feeder = threading.Thread(target=listen)
    feeder.start()
    ours, theirs = SPAWN.Pipe()
    child = SPAWN.Process(target=_writer_child, args=(url, plan, theirs))
    child.start()
    try:
        assert ours.poll(CHILD_TIMEOUT) and ours.recv() == "ready"
        assert listening.wait(CHILD_TIMEOUT)
        for round_ in range(2):
            if round_ == 1:  # the listener's connection is killed: it must LISTEN again
                seen.clear()
                cluster().terminate_backends(dbname(url))
                deadline = time.monotonic() + CHILD_TIMEOUT
                while len(seen) < 3 and time.monotonic() < deadline:  # a few turns: reconnected
                    stop.wait(bound(0.05))
            sent = time.monotonic()
            ours.send(f"round {round_}")
            assert ours.poll(CHILD_TIMEOUT)
            ours.recv()
            deadline = time.monotonic() + CHILD_TIMEOUT
            while not any(plan in names and at >= sent for at, names in seen) and time.monotonic() < deadline:
                stop.wait(bound(0.01))
            woke = min(at for at, names in seen if plan in names and at >= sent)
            assert woke - sent < 1.0, f"round {round_}: the feed woke {woke - sent:.2f}s after the write"
    finally:
        ours.send(None)
        child.join(CHILD_TIMEOUT)
        stop.set()
        feeder.join(CHILD_TIMEOUT)
    assert not feeder.is_alive()


def test_the_feed_listens_again_after_a_restart_and_asks_for_a_look_at_every_plan(
    pg_store: PostgresStore, url: str
) -> None:
    """`pg_ctl restart` cuts the LISTEN connection and refuses the first attempts to make it
    again; the feed keeps trying, yields ANY_PLAN once it listens (what was notified
    meanwhile is lost), then hears writes again."""
    plan = new_plan(pg_store)
    stop = threading.Event()
    seen: list[set[str]] = []
    heard = threading.Condition()

    def listen() -> None:
        for names in pg_store.changes(stop, 0.5):
            with heard:
                seen.append(names)
                heard.notify_all()

    def wait_for(test: Any) -> bool:
        with heard:
            return heard.wait_for(lambda: test(seen), CHILD_TIMEOUT)

    feeder = threading.Thread(target=listen)
    feeder.start()
    try:
        assert wait_for(lambda s: len(s) >= 1)  # listening
        cluster().restart()
        assert wait_for(lambda s: any(ANY_PLAN in names for names in s)), "the feed never listened again"
        writer = PostgresStore(url)
        try:
            Planner(writer).create_task(plan, "after the restart")
        finally:
            writer.close()
        assert wait_for(lambda s: any(plan in names for names in s)), "a write after the restart was not heard"
    finally:
        stop.set()
        feeder.join(CHILD_TIMEOUT)
    assert not feeder.is_alive()


# -- two hosts, opposite edges ---------------------------------------------------------------


def test_two_servers_adding_opposite_edges_at_the_same_instant_never_store_a_cycle(
    pg_store: PostgresStore, url: str
) -> None:
    rounds = 15
    plan = new_plan(pg_store, tasks=2 * rounds)
    pairs = [(2 * r + 1, 2 * r + 2) for r in range(rounds)]
    barrier = SPAWN.Barrier(2)
    a_read, a_write = SPAWN.Pipe(duplex=False)
    b_read, b_write = SPAWN.Pipe(duplex=False)
    a = SPAWN.Process(target=_edge_child, args=(url, plan, pairs, barrier, a_write))
    b = SPAWN.Process(target=_edge_child, args=(url, plan, [(y, x) for x, y in pairs], barrier, b_write))
    a.start()
    b.start()
    assert a_read.poll(CHILD_TIMEOUT) and b_read.poll(CHILD_TIMEOUT)
    from_a, from_b = a_read.recv(), b_read.recv()
    a.join(CHILD_TIMEOUT)
    b.join(CHILD_TIMEOUT)
    # Each round: one link made, the other refused as a cycle (whichever came second).
    assert all({x, y} == {"linked", "cycle"} for x, y in zip(from_a, from_b, strict=True)), (from_a, from_b)
    tasks = pg_store.snapshot(plan).tasks
    for x, y in pairs:
        assert not (y in tasks[x].blocked_by and x in tasks[y].blocked_by), f"cycle #{x} <-> #{y} stored"
        assert (y in tasks[x].blocked_by) != (x in tasks[y].blocked_by)  # exactly one edge won


# -- shared sessions ---------------------------------------------------------------------------


def test_session_state_round_trips_and_is_shared_by_servers(url: str) -> None:
    one, two = PostgresStore(url), PostgresStore(url)
    try:
        with one.edit_session("client-a") as state:
            assert state == {}
            state.update(todo=[{"content": "x", "status": "pending"}], plan="2026-01-01-p", clock=3)
        with two.edit_session("client-a") as state:
            assert state == {"todo": [{"content": "x", "status": "pending"}], "plan": "2026-01-01-p", "clock": 3}
            state["clock"] = 4
        with pytest.raises(RuntimeError), one.edit_session("client-a") as state:
            state["clock"] = 99
            raise RuntimeError("the call failed: nothing is saved")
        with one.edit_session("client-a") as state:
            assert state["clock"] == 4
        with one.edit_session("client-b") as state:
            assert state == {}  # keyed: another session starts empty
    finally:
        one.close()
        two.close()


def test_edits_of_one_session_on_two_servers_take_turns(url: str) -> None:
    one, two = PostgresStore(url), PostgresStore(url, lock_timeout=30)
    edits = 25

    def bump(s: PostgresStore) -> None:
        for _ in range(edits):
            with s.edit_session("k") as state:
                state["n"] = state.get("n", 0) + 1

    try:
        threads = [threading.Thread(target=bump, args=(s,)) for s in (one, two)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(CHILD_TIMEOUT)
        with one.edit_session("k") as state:
            assert state["n"] == 2 * edits  # no lost update
        busy = PostgresStore(url, lock_timeout=0.2)
        try:
            with one.edit_session("k"), pytest.raises(SessionBusy):
                busy.edit_session("k").__enter__()
        finally:
            busy.close()
    finally:
        one.close()
        two.close()


def test_as_many_calls_as_the_pool_has_connections_can_each_hold_a_session_and_write(pg_store: PostgresStore) -> None:
    """A server holds a call's session (a row lock, so a connection) for the whole call,
    and the call's plan writes need a connection too: POOL_MAX calls at once must not
    take every connection and then wait for one more."""
    plan = new_plan(pg_store)
    planner = Planner(pg_store)
    together = threading.Barrier(POOL_MAX, timeout=CHILD_TIMEOUT)
    made: list[int] = []
    errors: list[Exception] = []

    def call(i: int) -> None:
        try:
            with pg_store.edit_session(f"client-{i}") as state:
                together.wait()  # every call holds its session now
                made.append(planner.create_task(plan, f"from client {i}").id)
                state["done"] = True
        except Exception as e:
            errors.append(e)

    calls = [threading.Thread(target=call, args=(i,)) for i in range(POOL_MAX)]
    for c in calls:
        c.start()
    for c in calls:
        c.join(CHILD_TIMEOUT)
    assert errors == [] and sorted(made) == list(range(1, POOL_MAX + 1))


def test_sessions_unused_for_a_day_are_forgotten(pg_store: PostgresStore, url: str) -> None:
    for key in ("old", "new"):
        with pg_store.edit_session(key) as state:
            state["x"] = key
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"UPDATE {SESSIONS} SET updated_at = now() - interval '25 hours' WHERE key = 'old'")
    pg_store.sessions._next_sweep = 0.0  # the sweep is due (it runs at most hourly)
    with pg_store.edit_session("new"):
        pass
    with psycopg.connect(url) as conn:
        assert conn.execute(f"SELECT key FROM {SESSIONS} ORDER BY key").fetchall() == [("new",)]


# -- copies -----------------------------------------------------------------------------------


def test_files_to_database_to_files_gives_byte_identical_plans(tmp_path: Path, pg_store: PostgresStore) -> None:
    source = FileStore(tmp_path / "a")
    source.prepare()
    planner = Planner(source)
    active = planner.create_plan("Copy me", tasks=[{"subject": "one"}, {"subject": "two", "blockedBy": [1]}]).name
    planner.create_task(active, "three ✓ ünïcode", blocked_by=[2], metadata={"z": 1, "a": [1, 2]})
    planner.update_task(active, 3, status="deleted")
    done = planner.create_plan("Finished", tasks=[{"subject": "only"}]).name
    planner.update_task(done, 1, status="completed")
    planner.archive(done)
    folder = source.plan_folder(active)
    # A hand edit: keys in another order, an extra field; and a damaged task file.
    (folder / "task_1.json").write_text('{"subject": "one", "id": 1, "extra": {"kept": true}, "blocks": [2]}')
    (folder / "task_3.json").write_text("{not json")  # where the deleted #3 was

    records = list(source.export_plans())
    assert [pg_store.import_plan(r) for r in records] == [True, True]
    assert [pg_store.import_plan(r) for r in records] == [False, False]  # a second run changes nothing
    assert list(pg_store.export_plans()) == records
    assert pg_store.is_archived(done) and not pg_store.is_archived(active)
    # What a reader gets is what the file store gives, the damaged task reported alike.
    assert pg_store.snapshot(active).model_dump() == source.snapshot(active).model_dump()
    assert pg_store.snapshot(active).corrupt[0].task_id == 3

    target = FileStore(tmp_path / "b")
    target.prepare()
    assert [target.import_plan(r) for r in pg_store.export_plans()] == [True, True]
    ignore = {".lock"}
    assert copied_state(target.root / "todo", ignore) == copied_state(source.root / "todo", ignore)
    assert copied_state(target.root / "done", ignore) == copied_state(source.root / "done", ignore)

    changed = records[0]
    changed.tasks = {**changed.tasks, 1: b'{"id": 1, "subject": "other"}\n'}
    with pytest.raises(PlanExists):
        pg_store.import_plan(changed)


def test_ids_are_never_reused_and_archiving_keeps_the_plan(pg_store: PostgresStore) -> None:
    planner = Planner(pg_store)
    plan = new_plan(pg_store, tasks=2)
    planner.update_task(plan, 2, status="deleted")
    assert planner.create_task(plan, "next").id == 3
    with pg_store.transaction(plan) as txn:
        assert txn.next_id() == 4  # issued, then nothing written with it: the mark still moves
    assert planner.create_task(plan, "after").id == 5
    before = pg_store.plan_versions()[plan]
    for i in (1, 3, 5):
        planner.update_task(plan, i, status="completed")
    planner.archive(plan)
    after = pg_store.plan_versions()[plan]
    assert after.archived and after.stamp != before.stamp
    assert pg_store.archived_plans() == [plan] and pg_store.active_plans() == []
    assert sorted(pg_store.snapshot(plan).tasks) == [1, 3, 5]
    assert pg_store.location(plan) == f"{pg_store.describe()}#{plan}"
    assert pg_store.title(plan) == "Shared plan"


def test_a_server_sees_another_servers_edits_creations_and_deletions_exactly(url: str) -> None:
    """Two servers on one database, each reading the plan after the other wrote it: each
    read is the plan as written, whatever mix of edits, new tasks and deletions came
    between (a deletion alone too)."""
    one, two = PostgresStore(url), PostgresStore(url)
    try:
        plan = new_plan(one, tasks=4)
        p1, p2 = Planner(one), Planner(two)
        assert sorted(two.snapshot(plan).tasks) == [1, 2, 3, 4]
        p1.update_task(plan, 2, subject="edited by one")
        p1.create_task(plan, "made by one")
        assert {i: t.subject for i, t in two.snapshot(plan).tasks.items()}[2] == "edited by one"
        assert sorted(two.view(plan).tasks) == [1, 2, 3, 4, 5]
        p1.update_task(plan, 3, status="deleted")  # a deletion alone
        assert sorted(two.view(plan).tasks) == [1, 2, 4, 5]
        p2.update_task(plan, 4, status="deleted")
        p2.update_task(plan, 1, subject="edited by two")
        p2.create_task(plan, "made by two")
        assert sorted(one.view(plan).tasks) == [1, 2, 5, 6]
        assert one.view(plan).tasks[1].subject == "edited by two"
        assert one.snapshot(plan).tasks == two.snapshot(plan).tasks
    finally:
        one.close()
        two.close()
