"""The task rules users rely on: ids, deletes, reopening, completion, metadata, extras."""

from __future__ import annotations

import json

import pytest

from planning_core import FileStore, Planner, TaskStatus
from planning_core.render import updated_text
from tests.support.files import SEED_FIELDS, assert_mirrored_on_disk, edit_task, read_task_file, tree_state


@pytest.mark.parametrize("task_id", [3, "3", "#3", " #3 "])
def test_ids_accept_int_string_and_hash(planner: Planner, plan: str, task_id: object) -> None:
    assert planner.get_task(plan, task_id).id == 3
    change = planner.update_task(plan, task_id, description=f"via {task_id!r}")
    assert change.task_id == 3 and change.changed == ["description"]


def test_ids_never_reused_after_delete(planner: Planner, store: FileStore, plan: str) -> None:
    folder = store.todo / plan
    planner.update_task(plan, 4, status="deleted")
    assert not (folder / "task_4.json").exists()
    assert planner.create_task(plan, "five").id == 5
    planner.update_task(plan, 5, status="deleted")
    # a fresh store (restart) still does not reuse 4 or 5
    assert Planner(FileStore(store.root)).create_task(plan, "six").id == 6
    assert int((folder / ".highwatermark").read_text()) == 6


@pytest.mark.parametrize("mark", ["1\n", "0", "", "garbage", "-5", "99999999999", None])
def test_wrong_highwatermark_never_overwrites(planner: Planner, store: FileStore, plan: str, mark: str | None) -> None:
    folder = store.todo / plan
    hwm = folder / ".highwatermark"
    if mark is None:
        hwm.unlink()
    else:
        hwm.write_text(mark)
    before = {i: (folder / f"task_{i}.json").read_bytes() for i in range(1, 5)}
    new = planner.create_task(plan, "new one")
    assert new.id == 5
    assert {i: (folder / f"task_{i}.json").read_bytes() for i in range(1, 5)} == before
    assert int(hwm.read_text()) == 5
    assert planner.create_task(plan, "another").id == 6


def test_lower_highwatermark_with_a_gap(planner: Planner, store: FileStore, plan: str) -> None:
    folder = store.todo / plan
    planner.create_task(plan, "five")
    planner.create_task(plan, "six")
    planner.update_task(plan, 5, status="deleted")
    (folder / ".highwatermark").write_text("3\n")  # 4 and 6 exist, 5 is free
    before = {p.name: p.read_bytes() for p in folder.glob("task_*.json")}
    t = planner.create_task(plan, "new")
    assert t.id not in (1, 2, 3, 4, 6)
    assert {p.name: p.read_bytes() for p in folder.glob("task_*.json") if p.name in before} == before


def test_delete_cleans_both_directions(planner: Planner, store: FileStore, plan: str) -> None:
    folder = store.todo / plan
    change = planner.update_task(plan, "#2", status="deleted")
    assert change.deleted
    assert updated_text(2, change.changed, deleted=True).startswith("Updated task #2 ")
    assert not (folder / "task_2.json").exists()
    tasks = assert_mirrored_on_disk(folder)
    assert sorted(tasks) == [1, 3, 4]
    assert tasks[1]["blocks"] == [3]
    assert tasks[4]["blockedBy"] == [3]
    snap = store.snapshot(plan)
    assert 2 not in snap.tasks and snap.tasks[1].blocks == [3]


def test_add_and_remove_edges_keep_mirrors(planner: Planner, store: FileStore, plan: str) -> None:
    folder = store.todo / plan
    t5 = planner.create_task(plan, "docs", blocks=[4], blocked_by=[1])
    tasks = assert_mirrored_on_disk(folder)
    assert 5 in tasks[4]["blockedBy"] and 5 in tasks[1]["blocks"]
    change = planner.update_task(plan, t5.id, remove_blocks=[4], remove_blocked_by=["#1"], add_blocked_by=[3])
    assert change.changed == ["blockedBy", "blocks"]
    tasks = assert_mirrored_on_disk(folder)
    assert tasks[5]["blockedBy"] == [3] and tasks[5]["blocks"] == []
    assert 5 not in tasks[4]["blockedBy"] and 5 not in tasks[1]["blocks"] and 5 in tasks[3]["blocks"]


def test_reopen_completed(planner: Planner, store: FileStore, plan: str) -> None:
    c = planner.update_task(plan, 2, status="in_progress", owner="bob")
    assert c.task is not None and c.task.status is TaskStatus.IN_PROGRESS and c.started
    assert read_task_file(store.todo / plan, 2)["status"] == "in_progress"
    c = planner.update_task(plan, 1, status="pending")
    assert c.changed == ["status"] and c.task is not None and c.task.status is TaskStatus.PENDING
    assert read_task_file(store.todo / plan, 1)["status"] == "pending"
    # the reopened #1 now blocks #2 and #3 again
    assert store.snapshot(plan).tasks[4].blocked_by == [2, 3]
    assert planner.list_tasks(plan, status="blocked").open_blockers[2] == [1]


def test_completing_names_unblocked_and_all_done(planner: Planner, plan: str) -> None:
    c = planner.update_task(plan, 3, status="completed")
    assert c.completed and [t.id for t in c.unblocked] == [4] and not c.all_done
    assert "Now unblocked: #4 Add logout endpoint" in updated_text(3, c.changed, c.unblocked, c.all_done)
    c = planner.update_task(plan, 4, status="completed")
    assert c.completed and c.unblocked == [] and c.all_done
    text = updated_text(4, c.changed, c.unblocked, c.all_done)
    assert text.startswith("Updated task #4 status")
    assert "All tasks in this plan are done" in text and "plan.md" in text and "PlanArchive" in text


def test_completing_first_of_a_fan_out(planner: Planner) -> None:
    snap = planner.create_plan(
        "Fan", date="2026-05-28",
        tasks=[{"subject": "root"}, {"subject": "a", "blockedBy": [1]}, {"subject": "b", "blockedBy": [1]},
               {"subject": "c", "blockedBy": [1, 2]}],
    )  # fmt: skip
    c = planner.update_task(snap.name, 1, status="completed")
    assert [t.id for t in c.unblocked] == [2, 3]  # #4 still waits for #2


def test_metadata_merge_removes_null_keys(planner: Planner, store: FileStore, plan: str) -> None:
    t = planner.create_task(plan, "meta", metadata={"a": 1, "b": {"x": 2}, "gone": None})
    assert t.metadata == {"a": 1, "b": {"x": 2}}
    c = planner.update_task(plan, t.id, metadata={"b": None, "c": "three"})
    assert c.changed == ["metadata"]
    assert read_task_file(store.todo / plan, t.id)["metadata"] == {"a": 1, "c": "three"}


def test_only_changed_fields_are_reported_and_noop_writes_nothing(
    planner: Planner, store: FileStore, plan: str
) -> None:
    before = tree_state(store.root)
    c = planner.update_task(plan, 4, subject="Add logout endpoint", owner="", metadata={})
    assert c.changed == []
    assert updated_text(4, c.changed) == "Updated task #4 (nothing changed)"
    assert tree_state(store.root) == before
    c = planner.update_task(plan, 4, subject="Add logout", owner="carol")
    assert c.changed == ["subject", "owner"]
    assert updated_text(4, c.changed) == "Updated task #4 subject, owner"


def test_unknown_fields_in_a_task_file_survive_an_update(planner: Planner, store: FileStore, plan: str) -> None:
    path = store.todo / plan / "task_4.json"
    edit_task(path.parent, 4, priority="high", **{"x-custom": {"nested": [1, 2]}})
    planner.update_task(plan, 4, subject="Add logout endpoint v2", add_blocked_by=[1])
    planner.update_task(plan, 1, description="touch the blocker too")
    after = json.loads(path.read_text())
    assert after["priority"] == "high" and after["x-custom"] == {"nested": [1, 2]}
    assert list(after)[: len(SEED_FIELDS)] == SEED_FIELDS
    assert after["subject"] == "Add logout endpoint v2" and sorted(after["blockedBy"]) == [1, 2, 3]


def test_claim_is_atomic_status_and_owner(planner: Planner, store: FileStore, plan: str) -> None:
    c = planner.update_task(plan, 4, status="completed")  # completing needs no unblocked blockers check
    planner.update_task(plan, 4, status="pending")
    planner.update_task(plan, 3, status="completed")
    c = planner.update_task(plan, 4, status="in_progress", owner="dave")
    data = read_task_file(store.todo / plan, 4)
    assert (data["status"], data["owner"]) == ("in_progress", "dave")
    assert c.changed == ["status", "owner"] and c.started
