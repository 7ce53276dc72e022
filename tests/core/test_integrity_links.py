"""Promise: no link points to a task that has no file. Repair drops such links (an
unreadable file is not missing: links to it stay), and removing one always works."""

from __future__ import annotations

from typing import Any

import pytest

from planning_core import Planner, TaskNotFound
from planning_core.store import PlanStore
from planning_core.stores.files import FileStore
from tests.support.files import assert_mirrored_on_disk, read_task_file
from tests.support.stores import assert_mirrored


@pytest.fixture
def plan(planner: Planner) -> str:
    # #2 and #3 are blocked by #1; #3 is also blocked by #2.
    tasks: list[dict[str, Any]] = [
        {"subject": "one"},
        {"subject": "two", "blockedBy": [1]},
        {"subject": "three", "blockedBy": [1, 2]},
    ]
    return planner.create_plan("Links", name="links", date="2026-05-28", tasks=tasks).name


def test_a_link_to_a_task_with_no_file_can_be_removed(planner: Planner, file_store: FileStore, plan: str) -> None:
    (file_store.todo / plan / "task_2.json").unlink()  # a hand delete (or an old version's crash)
    assert planner.get_task(plan, 3).blocked_by == [1, 2]
    assert planner.get_task(plan, 1).blocks == [2, 3]
    change = planner.update_task(plan, 3, remove_blocked_by=[2])
    assert change.changed == ["blockedBy"] and change.task is not None and change.task.blocked_by == [1]
    change = planner.update_task(plan, 1, remove_blocks=["#2"])
    assert change.changed == ["blocks"] and change.task is not None and change.task.blocks == [3]
    assert read_task_file(file_store.todo / plan, 3)["blockedBy"] == [1]
    assert read_task_file(file_store.todo / plan, 1)["blocks"] == [3]
    assert_mirrored_on_disk(file_store.todo / plan)


def test_removing_an_unknown_unlinked_id_is_still_refused(planner: Planner, file_store: FileStore, plan: str) -> None:
    (file_store.todo / plan / "task_2.json").unlink()
    with pytest.raises(TaskNotFound, match="#9"):
        planner.update_task(plan, 3, remove_blocked_by=[9])
    with pytest.raises(TaskNotFound, match="#2"):
        planner.update_task(plan, 1, remove_blocked_by=[2])  # #1 was never blocked by #2
    with pytest.raises(TaskNotFound, match="#2"):
        planner.update_task(plan, 1, add_blocks=[2])
    assert read_task_file(file_store.todo / plan, 3)["blockedBy"] == [1, 2]


def test_repair_drops_links_to_missing_tasks_only(planner: Planner, file_store: FileStore, plan: str) -> None:
    folder = file_store.todo / plan
    (folder / "task_2.json").unlink()
    (folder / "task_1.json").write_text("{ not json")  # unreadable, not missing
    repaired = file_store.repair(plan)
    assert repaired.dropped == {3: [2]}
    assert repaired.rewritten == [3]
    # The link to the unreadable #1 stays; the one to the missing #2 is gone.
    assert read_task_file(folder, 3)["blockedBy"] == [1]
    assert (folder / "task_1.json").read_text() == "{ not json"
    assert file_store.repair(plan).rewritten == []
    assert planner.get_task(plan, 3).blocked_by == [1]


def test_repair_drops_a_stale_blocks_entry_to_a_missing_task(
    planner: Planner, file_store: FileStore, plan: str
) -> None:
    folder = file_store.todo / plan
    planner.update_task(plan, 3, status="deleted")
    (folder / "task_2.json").unlink()
    repaired = file_store.repair(plan)
    assert repaired.dropped == {1: [2]}
    assert read_task_file(folder, 1)["blocks"] == []
    assert_mirrored_on_disk(folder)


def test_every_write_leaves_no_dangling_link(planner: Planner, store: PlanStore, plan: str) -> None:
    """The same rule without a crash, on every backend: after each writing operation, every
    id a stored task names is a stored task."""
    planner.create_task(plan, "four", blocked_by=[1], blocks=[3])
    planner.update_task(plan, 2, status="deleted")
    planner.update_task(plan, 3, remove_blocked_by=[1])
    planner.update_task(plan, 4, status="deleted")
    tasks = assert_mirrored(store, plan)
    assert sorted(tasks) == [1, 3]
    assert all(i in tasks for t in tasks.values() for i in (*t["blockedBy"], *t["blocks"]))
