"""The in-memory store: what the core suite (run on it as on every store) does not reach:
its writer lock, its change feed, its sessions and exact copies to and from files.
Other threads are synchronised by events and queues, never by sleeps."""

from __future__ import annotations

import queue
import threading
from pathlib import Path

import pytest

from planning_core import Planner
from planning_core.errors import PlanBusy, PlanExists
from planning_core.store import ChangeFeed, Copyable, PlanRecord, SharedSessions
from planning_core.stores import MEMORY_URL, open_store
from planning_core.stores.files import FileStore
from planning_core.stores.memory import MemoryStore
from tests.support.files import copied_state
from tests.support.seed import seed_plan
from tests.support.stores import plan_held
from tests.support.waits import bound


@pytest.fixture
def memory() -> MemoryStore:
    store = open_store(MEMORY_URL)
    assert isinstance(store, MemoryStore)
    assert isinstance(store, ChangeFeed) and isinstance(store, SharedSessions) and isinstance(store, Copyable)
    return store


def test_a_second_writer_waits_for_the_lock_then_is_told_busy() -> None:
    store = MemoryStore(lock_timeout=0.2)
    plan = seed_plan(Planner(store))
    with plan_held(store, plan), pytest.raises(PlanBusy, match=r"over 0\.2s"):
        Planner(store).create_task(plan, "blocked writer")
    assert Planner(store).create_task(plan, "after").id == 5  # the refused writer burnt no id


def test_a_block_that_fails_applies_nothing(memory: MemoryStore) -> None:
    plan = seed_plan(Planner(memory))
    before = list(memory.export_plans()), memory.plan_versions()
    with pytest.raises(RuntimeError), memory.transaction(plan) as txn:
        task = txn.get(4)
        task.subject = "changed"
        txn.put(task)
        txn.next_id()
        txn.delete(1)
        raise RuntimeError("refused half way")
    assert (list(memory.export_plans()), memory.plan_versions()) == before


def test_the_change_feed_names_each_plan_written(memory: MemoryStore) -> None:
    planner = Planner(memory)
    plan = seed_plan(planner)
    stop = threading.Event()
    seen: queue.Queue[set[str]] = queue.Queue()

    def feed() -> None:
        for names in memory.changes(stop, wait=0.05):
            seen.put(names)

    reader = threading.Thread(target=feed)
    reader.start()
    try:
        assert seen.get(timeout=bound(10)) == set()  # running (a quiet interval): later writes are seen
        planner.update_task(plan, 4, subject="renamed")
        while (names := seen.get(timeout=bound(10))) == set():
            pass
        assert names == {plan}
        other = planner.create_plan("Other", date="2026-06-01").name
        while (names := seen.get(timeout=bound(10))) == set():
            pass
        assert names == {other}
    finally:
        stop.set()
        reader.join(bound(10))
    assert not reader.is_alive()


def test_a_session_is_saved_only_when_its_block_succeeds(memory: MemoryStore) -> None:
    with memory.edit_session("s1") as state:
        assert state == {}
        state["todo"] = ["a"]
    with pytest.raises(RuntimeError), memory.edit_session("s1") as state:
        state["todo"].append("b")
        raise RuntimeError
    with memory.edit_session("s1") as state:
        assert state == {"todo": ["a"]}
    with memory.edit_session("s2") as state:
        assert state == {}


def test_files_to_memory_to_files_is_byte_identical(memory: MemoryStore, tmp_path: Path) -> None:
    source = FileStore(tmp_path / "from")
    source.prepare()
    planner = Planner(source)
    done = seed_plan(planner)
    planner.archive(done, force=True)
    planner.create_plan("Second", date="2026-06-01", tasks=[{"subject": "x"}, {"subject": "y", "blockedBy": [1]}])
    planner.update_task("2026-06-01-second", 2, status="deleted")  # the high-water mark stays above the tasks

    records = list(source.export_plans())
    assert [memory.import_plan(r) for r in records] == [True, True]
    assert [memory.import_plan(r) for r in records] == [False, False]  # already so: nothing written
    assert list(memory.export_plans()) == records
    assert memory.is_archived(done) and memory.snapshot("2026-06-01-second").tasks.keys() == {1}

    target = FileStore(tmp_path / "to")
    target.prepare()
    for r in memory.export_plans():
        target.import_plan(r)
    ignore = {".lock"}  # the empty lock file, made by whichever store writes the folder
    assert copied_state(target.root, ignore) == copied_state(source.root, ignore)

    other = PlanRecord(done, archived=True, plan_md="# Else\n", high_water=0)
    with pytest.raises(PlanExists):
        memory.import_plan(other)
