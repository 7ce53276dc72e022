"""Copying every plan between stores in-process (planning_core.copy): files -> memory ->
files gives the same folders byte for byte (names, ids, the high-water mark, edges,
metadata, extra fields, timestamps, archived plans); a second run changes nothing; a
different plan of the same name is refused and the target keeps it as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planning_core import FileStore, Planner
from planning_core.copy import CopyOutcome, NotCopyable, copy_plans
from planning_core.store import PlanStore
from planning_core.stores.memory import MemoryStore
from tests.support.files import edit_task, tree_state
from tests.support.seed import PLAN_DATE, chain, make_plan, seed_root

EXTRA = {"estimate": {"hours": 3, "confidence": "low"}}  # a field a newer client wrote


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
    edit_task(root / "todo" / seed, 2, **EXTRA)

    trimmed = make_plan(root, "trimmed", chain(3)).name
    planner.update_task(trimmed, 3, status="deleted")

    done = make_plan(root, "shipped", chain(2)).name
    planner.update_task(done, 1, status="completed")
    planner.update_task(done, 2, status="completed")
    planner.archive(done)
    return FileStore(root)


def test_files_to_memory_to_files_is_byte_identical(source: FileStore, tmp_path: Path) -> None:
    memory = MemoryStore()
    first = copy_plans(source, memory)
    names = [f"{PLAN_DATE}-add-auth", f"{PLAN_DATE}-shipped", f"{PLAN_DATE}-trimmed"]
    assert first.copied == names and not first.identical and not first.refused
    assert memory.active_plans() == [names[0], names[2]] and memory.archived_plans() == [names[1]]

    back = files_store(tmp_path / "back")
    second = copy_plans(memory, back)
    assert second.copied == names
    assert tree_state(back.root) == tree_state(source.root)


def test_memory_serves_what_was_copied(source: FileStore) -> None:
    memory = MemoryStore()
    copy_plans(source, memory)
    seed = f"{PLAN_DATE}-add-auth"
    for name in (seed, f"{PLAN_DATE}-shipped"):
        assert memory.snapshot(name).tasks == source.snapshot(name).tasks  # statuses, owners, edges, timestamps
        assert memory.read_plan_md(name) == source.read_plan_md(name)
    got = memory.get_task(seed, 2)
    assert got.model_dump(by_alias=True)["estimate"] == EXTRA["estimate"]
    assert memory.get_task(seed, 4).metadata == {"ticket": "AUTH-4", "labels": ["api", "security"]}
    assert memory.get_task(seed, 4).blocked_by == [2, 3] and memory.get_task(seed, 1).blocks == [2, 3]


def test_a_deleted_last_id_is_not_reused_after_the_copy(source: FileStore, tmp_path: Path) -> None:
    trimmed = f"{PLAN_DATE}-trimmed"
    assert sorted(source.snapshot(trimmed).tasks) == [1, 2]  # #3 was deleted: 3 stays burnt
    memory = MemoryStore()
    copy_plans(source, memory)
    assert Planner(memory).create_task(trimmed, "after the copy").id == 4
    back = files_store(tmp_path / "back")
    copy_plans(source, back)
    assert Planner(back).create_task(trimmed, "after the copy").id == 4


def test_a_second_run_changes_nothing(source: FileStore, tmp_path: Path) -> None:
    target = files_store(tmp_path / "dst")
    copy_plans(source, target)
    before = tree_state(target.root)
    stamps = {p: p.stat().st_mtime_ns for p in target.root.rglob("*")}
    again = copy_plans(source, target)
    assert again.identical == [p.name for p in again.plans] and not again.copied and not again.refused
    assert tree_state(target.root) == before
    assert {p: p.stat().st_mtime_ns for p in target.root.rglob("*")} == stamps  # nothing rewritten

    memory = MemoryStore()
    copy_plans(source, memory)
    version = memory.plan_versions()
    assert not copy_plans(source, memory).copied
    assert memory.plan_versions() == version


def test_a_different_plan_of_the_same_name_is_refused_and_kept(source: FileStore, tmp_path: Path) -> None:
    dst_root = tmp_path / "dst"
    seed_root(dst_root, in_progress=False)  # same name, same tasks, but #3 is not in progress
    before = tree_state(dst_root)
    report = copy_plans(source, files_store(dst_root))
    seed = f"{PLAN_DATE}-add-auth"
    assert report.refused == [seed]
    assert report.copied == [f"{PLAN_DATE}-shipped", f"{PLAN_DATE}-trimmed"]  # the others still go
    after = tree_state(dst_root)
    assert {k: v for k, v in after.items() if k.startswith(f"todo/{seed}")} == {
        k: v for k, v in before.items() if k.startswith(f"todo/{seed}")
    }
    refused = next(p for p in report.plans if p.outcome is CopyOutcome.REFUSED)
    assert "different plan" in refused.line() and "left as it is" in refused.line()
    assert seed in report.summary() and "1 refused" in report.summary()


def test_active_here_archived_there_counts_as_different(source: FileStore, tmp_path: Path) -> None:
    """The same plan, byte for byte, archived in the target: refused, not merged."""
    target = files_store(tmp_path / "dst")
    copy_plans(source, target)
    seed = f"{PLAN_DATE}-add-auth"
    Planner(target).archive(seed, force=True)
    before = tree_state(target.root)
    report = copy_plans(source, target)
    assert report.refused == [seed]
    assert tree_state(target.root) == before

    memory = MemoryStore()
    copy_plans(source, memory)
    Planner(memory).archive(seed, force=True)
    assert copy_plans(source, memory).refused == [seed]
    assert memory.is_archived(seed)


def test_damaged_and_hand_edited_files_are_copied_as_they_are(source: FileStore, tmp_path: Path) -> None:
    """Files to files copies the bytes, not the planner's reading of them: a torn task file
    stays torn, and a plan with no high-water mark gets the highest id on disk."""
    seed = source.todo / f"{PLAN_DATE}-add-auth"
    (seed / "task_3.json").write_bytes(b'{"id": 3, "subject": "Add lo')
    trimmed = source.todo / f"{PLAN_DATE}-trimmed"
    (trimmed / ".highwatermark").unlink()
    target = files_store(tmp_path / "dst")
    copy_plans(source, target)
    copied = target.todo / f"{PLAN_DATE}-add-auth"
    assert (copied / "task_3.json").read_bytes() == b'{"id": 3, "subject": "Add lo'
    assert [c.task_id for c in target.snapshot(seed.name).corrupt] == [3]
    assert (target.todo / trimmed.name / ".highwatermark").read_text() == "2\n"
    assert copy_plans(source, target).identical == [p.name for p in copy_plans(source, target).plans]


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
    assert os.listdir(target.todo) == [] and os.listdir(target.done) == []


def test_an_empty_source_copies_nothing(tmp_path: Path) -> None:
    store: PlanStore = files_store(tmp_path / "empty")
    report = copy_plans(store, MemoryStore())
    assert report.plans == [] and "0 plans" in report.summary()


def test_a_record_never_writes_outside_the_target(tmp_path: Path) -> None:
    """A record comes from another store, maybe a hand-edited database: its name must be
    a plan name and its ids task ids before anything reaches a path."""
    from planning_core.errors import InvalidPlanName, StorageError
    from planning_core.store import PlanRecord

    target = files_store(tmp_path / "dst")
    with pytest.raises(InvalidPlanName):
        target.import_plan(PlanRecord("../../escaped", False, "# x\n", 0, {}))
    with pytest.raises(StorageError, match="task id 0 is out of range"):
        target.import_plan(PlanRecord(f"{PLAN_DATE}-bad-id", False, "# x\n", 0, {0: b"{}"}))
    assert not (tmp_path / "escaped").exists()
    assert os.listdir(target.todo) == [] and os.listdir(target.done) == []
