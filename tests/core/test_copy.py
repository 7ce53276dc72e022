"""Copying every plan between stores in-process (planning_core.import_export.copying), with each backend
(files, memory, postgres: the `store` fixture) as the target: files -> it -> files gives
the same folders byte for byte (names, ids, the high-water mark, edges,
metadata, extra fields, timestamps, archived plans); a second run changes nothing; a
different plan of the same name is refused and the target keeps it as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planning_core import Planner
from planning_core.import_export.copying import CopyOutcome, NotCopyable, copy_plans
from planning_core.store import PlanStore
from planning_core.stores.files import FileStore
from planning_core.stores.memory import MemoryStore
from tests.support.files import copied_state, edit_task
from tests.support.seed import PLAN_DATE, chain, make_plan, seed_plan, seed_root
from tests.support.stores import stored_plan, stored_state

EXTRA = {"estimate": {"hours": 3, "confidence": "low"}}  # a field a newer client wrote
SEED = f"{PLAN_DATE}-add-auth"
SHIPPED = f"{PLAN_DATE}-shipped"
TRIMMED = f"{PLAN_DATE}-trimmed"
NAMES = [SEED, SHIPPED, TRIMMED]  # oldest first: by name (they begin with their date)


def files_store(root: Path) -> FileStore:
    store = FileStore(root)
    store.prepare()
    return store


@pytest.fixture
def source(tmp_path: Path) -> FileStore:
    """A planning root with what a copy must keep: the seed (edges, an owner, statuses),
    metadata and an extra field, a plan whose last task was deleted (the high-water mark
    is above every task id), and an archived plan."""
    root = tmp_path / "src"
    seed = seed_root(root)
    planner = Planner(files_store(root))
    planner.update_task(seed, 4, metadata={"ticket": "AUTH-4", "labels": ["api", "security"]})
    planner.update_task(seed, 2, priority=0, labels=["api"], parent=1)  # kept by every store, both ways
    edit_task(root / "todo" / seed, 2, **EXTRA)

    trimmed = make_plan(root, "trimmed", chain(3)).name
    planner.update_task(trimmed, 3, status="deleted")

    done = make_plan(root, "shipped", chain(2)).name
    planner.update_task(done, 1, status="completed")
    planner.update_task(done, 2, status="completed")
    planner.archive(done)
    return FileStore(root)


def test_a_round_trip_through_each_store_is_byte_identical(source: FileStore, store: PlanStore, tmp_path: Path) -> None:
    """files -> `store` -> files: the same folders, files and bytes (task files, plan.md,
    the high-water mark, todo/ or done/), whichever store is in the middle."""
    first = copy_plans(source, store)
    assert first.copied == NAMES and not first.identical and not first.refused
    assert store.active_plans() == [SEED, TRIMMED] and store.archived_plans() == [SHIPPED]

    back = files_store(tmp_path / "back")
    second = copy_plans(store, back)
    assert second.copied == NAMES
    assert copied_state(back.root) == copied_state(source.root)


def test_the_target_serves_what_was_copied(source: FileStore, store: PlanStore) -> None:
    copy_plans(source, store)
    for name in NAMES:
        assert store.snapshot(name).tasks == source.snapshot(name).tasks  # statuses, owners, edges, timestamps
        assert store.read_plan_md(name) == source.read_plan_md(name)
    assert store.get_task(SEED, 2).model_dump(by_alias=True)["estimate"] == EXTRA["estimate"]
    assert store.get_task(SEED, 4).metadata == {"ticket": "AUTH-4", "labels": ["api", "security"]}
    assert store.get_task(SEED, 4).blocked_by == [2, 3] and store.get_task(SEED, 1).blocks == [2, 3]
    assert store.get_task(SEED, 3).owner == "alice"
    assert (store.get_task(SEED, 2).priority, store.get_task(SEED, 2).labels, store.get_task(SEED, 2).parent) == (
        0,
        ["api"],
        1,
    )
    assert store.get_task(SEED, 2).created_at == source.get_task(SEED, 2).created_at != ""


def test_a_deleted_last_id_is_not_reused_after_the_copy(source: FileStore, store: PlanStore) -> None:
    assert sorted(source.snapshot(TRIMMED).tasks) == [1, 2]  # #3 was deleted: 3 stays burnt
    copy_plans(source, store)
    assert Planner(store).create_task(TRIMMED, "after the copy").id == 4


def test_a_second_run_changes_nothing(source: FileStore, store: PlanStore) -> None:
    copy_plans(source, store)
    before = stored_state(store)
    again = copy_plans(source, store)
    assert again.identical == NAMES and not again.copied and not again.refused
    assert stored_state(store) == before  # the plans, and their versions: not even a rewrite
    if isinstance(store, FileStore):
        stamps = {p: p.stat().st_mtime_ns for p in store.root.rglob("*")}
        copy_plans(source, store)
        assert {p: p.stat().st_mtime_ns for p in store.root.rglob("*")} == stamps


def test_a_different_plan_of_the_same_name_is_refused_and_kept(source: FileStore, store: PlanStore) -> None:
    seed_plan(Planner(store), in_progress=False)  # same name, same tasks, but #3 is not in progress
    before = stored_plan(store, SEED)
    report = copy_plans(source, store)
    assert report.refused == [SEED]
    assert report.copied == [SHIPPED, TRIMMED]  # the others still go
    assert stored_plan(store, SEED) == before
    assert store.get_task(SEED, 3).status.value == "pending"
    refused = next(p for p in report.plans if p.outcome is CopyOutcome.REFUSED)
    assert "different plan" in refused.line() and "left as it is" in refused.line()
    assert SEED in report.summary() and "1 refused" in report.summary()


def test_active_here_archived_there_counts_as_different(source: FileStore, store: PlanStore) -> None:
    """The same plan, byte for byte, but archived in the target: refused, not merged."""
    copy_plans(source, store)
    Planner(store).archive(SEED, force=True)
    before = stored_state(store)
    assert copy_plans(source, store).refused == [SEED]
    assert stored_state(store) == before and store.is_archived(SEED)


def test_damaged_and_hand_edited_files_are_copied_as_they_are(source: FileStore, tmp_path: Path) -> None:
    """Files to files copies the bytes, not the planner's reading of them: a torn task file
    stays torn, and a plan with no high-water mark gets the highest id on disk."""
    (source.todo / SEED / "task_3.json").write_bytes(b'{"id": 3, "subject": "Add lo')
    (source.todo / TRIMMED / ".highwatermark").unlink()
    target = files_store(tmp_path / "dst")
    copy_plans(source, target)
    assert (target.todo / SEED / "task_3.json").read_bytes() == b'{"id": 3, "subject": "Add lo'
    assert [c.task_id for c in target.snapshot(SEED).corrupt] == [3]
    assert (target.todo / TRIMMED / ".highwatermark").read_text() == "2\n"
    assert copy_plans(source, target).identical == NAMES


def test_a_store_that_cannot_copy_is_refused_before_anything_is_written(source: FileStore, tmp_path: Path) -> None:
    class OlderBackend:
        """A backend written before Copyable: it has no export_plans/import_plan."""

        def describe(self) -> str:
            return "older-backend://somewhere"

    target = files_store(tmp_path / "dst")
    with pytest.raises(NotCopyable, match="target store older-backend://somewhere cannot copy"):
        copy_plans(source, OlderBackend())  # type: ignore[arg-type]
    with pytest.raises(NotCopyable, match="source store"):
        copy_plans(OlderBackend(), target)  # type: ignore[arg-type]
    assert not target.root.exists() or (os.listdir(target.todo) == [] and os.listdir(target.done) == [])


def test_an_empty_source_copies_nothing(tmp_path: Path) -> None:
    store: PlanStore = files_store(tmp_path / "empty")
    report = copy_plans(store, MemoryStore())
    assert report.plans == [] and "0 plans" in report.summary()


def test_a_record_never_writes_outside_the_target(tmp_path: Path) -> None:
    """A record comes from another store, maybe a hand-edited database: its name must be
    a plan name and its ids task ids before anything reaches a path."""
    from planning_core.errors import InvalidPlanName, PlanNotStorable
    from planning_core.store import PlanRecord

    target = files_store(tmp_path / "dst")
    with pytest.raises(InvalidPlanName):
        target.import_plan(PlanRecord("../../escaped", False, "# x\n", 0, {}))
    with pytest.raises(PlanNotStorable, match="task id 0 is out of range"):
        target.import_plan(PlanRecord(f"{PLAN_DATE}-bad-id", False, "# x\n", 0, {0: b"{}"}))
    assert not (tmp_path / "escaped").exists()
    assert not target.root.exists() or (os.listdir(target.todo) == [] and os.listdir(target.done) == [])


# -- damaged sources: every plan reported, the others copied ------------------------------

LATIN1_DOC = b'{"id": 2, "subject": "Caf\xe9 login", "status": "pending", "blockedBy": [1]}'


def test_a_document_that_is_not_utf8_is_copied_as_is_or_its_plan_reported(source: FileStore, store: PlanStore) -> None:
    """A Latin-1 byte in one task file: the file store takes the bytes as they are;
    PostgreSQL keeps documents as text (and the memory store parsed tasks), so there that
    plan is not copied, its line says which task and why, and every other plan is copied
    all the same."""
    (source.todo / SEED / "task_2.json").write_bytes(LATIN1_DOC)
    report = copy_plans(source, store)
    if isinstance(store, FileStore):
        assert report.copied == NAMES and report.complete
        assert (store.todo / SEED / "task_2.json").read_bytes() == LATIN1_DOC
        return
    assert report.copied == [SHIPPED, TRIMMED] and report.not_copied == [SEED] and not report.complete
    line = next(p.line() for p in report.plans if p.name == SEED)
    assert line.startswith(f"{SEED} (active, 4 tasks): NOT COPIED: ") and "task 2" in line, line
    if not isinstance(store, MemoryStore):
        assert "task_2.json" in line and "not UTF-8" in line and "0xe9" in line, line
    assert "writable" not in line and "disk" not in line, line  # nothing about the target's disk
    assert SEED not in store.active_plans() + store.archived_plans()
    assert "1 not copied" in report.summary() and f"not copied: {SEED}" in report.summary()


def test_entries_the_source_cannot_read_are_named_and_the_rest_copied(
    source: FileStore, store: PlanStore, tmp_path: Path
) -> None:
    """A symlink, a FIFO, a folder and names the store does not write, where task files
    would be: the plan is copied with the tasks that can be read, its line names every
    entry left behind with the reason, and their ids stay burnt in the target."""
    folder = source.todo / SEED
    (tmp_path / "elsewhere.json").write_bytes((folder / "task_4.json").read_bytes())
    (folder / "task_4.json").unlink()
    (folder / "task_4.json").symlink_to(tmp_path / "elsewhere.json")
    os.mkfifo(folder / "task_5.json")
    (folder / "task_6.json").mkdir()
    (folder / "task_07.json").write_bytes((folder / "task_1.json").read_bytes())
    (folder / "notes.txt").write_text("kept by hand\n")
    report = copy_plans(source, store)
    assert report.copied == NAMES and not report.complete and report.incomplete == [SEED]
    plan = next(p for p in report.plans if p.name == SEED)
    assert plan.tasks == 3
    left = dict(entry.split(": ", 1) for entry in plan.left_behind)
    assert sorted(left) == ["notes.txt", "task_07.json", "task_4.json", "task_5.json", "task_6.json"]
    assert "symbolic link" in left["task_4.json"] and "FIFO" in left["task_5.json"]
    assert "directory" in left["task_6.json"] and "not a task id" in left["task_07.json"]
    assert "LEFT BEHIND 5 entries" in plan.line() and "task_5.json" in plan.line()
    assert "copied without entries the source cannot read: " + SEED in report.summary()
    assert sorted(store.snapshot(SEED).tasks) == [1, 2, 3]
    assert Planner(store).create_task(SEED, "after the copy").id == 8  # 4..7 were on disk: never reused


def test_a_plan_the_source_cannot_read_is_reported_and_the_others_copied(tmp_path: Path, store: PlanStore) -> None:
    """A plan whose lock another writer holds past the timeout: not read, said so, and
    the plans after it are still copied."""
    from planning_core.stores.files.planlock import plan_lock

    root = tmp_path / "src"
    seed_root(root)
    later = make_plan(root, "later", chain(2)).name
    source = FileStore(root, lock_timeout=0.2)
    with plan_lock(source.todo / SEED / ".lock", 5):
        report = copy_plans(source, store)
    assert report.unreadable == [SEED] and report.copied == [later]
    line = report.plans[0].line()
    assert line.startswith(f"{SEED}: NOT READ from the source, nothing copied: ") and "busy" in line, line
    assert "1 not read from the source" in report.summary()
    assert store.active_plans() == [later]


def test_a_plan_is_read_within_a_bound_whatever_its_files_claim(source: FileStore, store: PlanStore) -> None:
    """Sparse task files that claim 60 MB each: the copy reads at most one plan's bound of
    them and names the rest, instead of holding them all (once 825 MiB)."""
    from planning_core.store import MAX_COPIED_PLAN_BYTES

    big = MAX_COPIED_PLAN_BYTES * 3 // 4
    for task_id in range(10, 13):
        with open(source.todo / TRIMMED / f"task_{task_id}.json", "wb") as f:
            f.truncate(big)
    record = next(r for r in source.export_plans() if r.name == TRIMMED)
    assert sum(len(d) for d in record.tasks.values()) <= MAX_COPIED_PLAN_BYTES
    assert len(record.left_behind) == 2 and all("a copy reads of one plan" in e for e in record.left_behind)
    report = copy_plans(source, store)
    assert {p.name for p in report.plans} == set(NAMES) and report.copied[:2] == [SEED, SHIPPED]


def test_a_database_plan_past_the_bound_is_not_read_and_the_others_copied(source: FileStore, tmp_path: Path) -> None:
    """PostgreSQL -> files: a plan whose documents hold more than a plan's bound (a row
    edited by hand) is said and never fetched; the plans after it are still copied."""
    import psycopg

    from planning_core.store import MAX_COPIED_PLAN_BYTES
    from planning_core.stores.postgres import PostgresStore
    from tests.support.pg import fresh_database_url

    url = fresh_database_url()
    db = PostgresStore(url)
    try:
        copy_plans(source, db)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "UPDATE planning_tasks SET doc = repeat('x', %s) WHERE plan = %s AND id = 1",
                (MAX_COPIED_PLAN_BYTES + 1, SEED),
            )
        target = files_store(tmp_path / "dst")
        report = copy_plans(db, target)
    finally:
        db.close()
    assert report.unreadable == [SEED] and report.copied == [SHIPPED, TRIMMED]
    assert "a copy reads of one plan" in report.plans[0].line()
    assert target.active_plans() == [TRIMMED] and target.archived_plans() == [SHIPPED]
