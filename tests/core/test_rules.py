"""The task rules users rely on: ids, deletes, reopening, completion, metadata, extras."""

from __future__ import annotations

import json

import pytest

from planning_core import Planner, TaskStatus
from planning_core.rendering.render import updated_text
from planning_core.store import PlanStore
from planning_core.stores.files import FileStore
from tests.support.files import SEED_FIELDS
from tests.support.seed import list_tasks
from tests.support.stores import add_extra_fields, assert_mirrored, reopened, stored_plan, stored_state, stored_tasks


@pytest.mark.parametrize("task_id", [3, "3", "#3", " #3 "])
def test_ids_accept_int_string_and_hash(planner: Planner, plan: str, task_id: object) -> None:
    assert planner.get_task(plan, task_id).id == 3
    change = planner.update_task(plan, task_id, description=f"via {task_id!r}")
    assert change.task_id == 3 and change.changed == ["description"]


def test_ids_never_reused_after_delete(planner: Planner, store: PlanStore, plan: str) -> None:
    planner.update_task(plan, 4, status="deleted")
    assert 4 not in stored_tasks(store, plan)
    assert planner.create_task(plan, "five").id == 5
    planner.update_task(plan, 5, status="deleted")
    # a fresh store (restart) still does not reuse 4 or 5
    with reopened(store) as fresh:
        assert Planner(fresh).create_task(plan, "six").id == 6
    assert stored_plan(store, plan)[1] == 6  # the high-water mark


@pytest.mark.parametrize("mark", ["1\n", "0", "", "garbage", "-5", "99999999999", None])
def test_wrong_highwatermark_never_overwrites(
    planner: Planner, file_store: FileStore, plan: str, mark: str | None
) -> None:
    folder = file_store.todo / plan
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


def test_lower_highwatermark_with_a_gap(planner: Planner, file_store: FileStore, plan: str) -> None:
    folder = file_store.todo / plan
    planner.create_task(plan, "five")
    planner.create_task(plan, "six")
    planner.update_task(plan, 5, status="deleted")
    (folder / ".highwatermark").write_text("3\n")  # 4 and 6 exist, 5 is free
    before = {p.name: p.read_bytes() for p in folder.glob("task_*.json")}
    t = planner.create_task(plan, "new")
    assert t.id not in (1, 2, 3, 4, 6)
    assert {p.name: p.read_bytes() for p in folder.glob("task_*.json") if p.name in before} == before


def test_delete_cleans_both_directions(planner: Planner, store: PlanStore, plan: str) -> None:
    change = planner.update_task(plan, "#2", status="deleted")
    assert change.deleted
    assert updated_text(2, change.changed, deleted=True).startswith("Updated task #2 ")
    tasks = assert_mirrored(store, plan)
    assert sorted(tasks) == [1, 3, 4]
    assert tasks[1]["blocks"] == [3]
    assert tasks[4]["blockedBy"] == [3]
    snap = store.snapshot(plan)
    assert 2 not in snap.tasks and snap.tasks[1].blocks == [3]


def test_add_and_remove_edges_keep_mirrors(planner: Planner, store: PlanStore, plan: str) -> None:
    t5 = planner.create_task(plan, "docs", blocks=[4], blocked_by=[1])
    tasks = assert_mirrored(store, plan)
    assert 5 in tasks[4]["blockedBy"] and 5 in tasks[1]["blocks"]
    change = planner.update_task(plan, t5.id, remove_blocks=[4], remove_blocked_by=["#1"], add_blocked_by=[3])
    assert change.changed == ["blockedBy", "blocks"]
    tasks = assert_mirrored(store, plan)
    assert tasks[5]["blockedBy"] == [3] and tasks[5]["blocks"] == []
    assert 5 not in tasks[4]["blockedBy"] and 5 not in tasks[1]["blocks"] and 5 in tasks[3]["blocks"]


def test_reopen_completed(planner: Planner, store: PlanStore, plan: str) -> None:
    c = planner.update_task(plan, 2, status="in_progress", owner="bob")
    assert c.task is not None and c.task.status is TaskStatus.IN_PROGRESS and c.started
    assert stored_tasks(store, plan)[2]["status"] == "in_progress"
    c = planner.update_task(plan, 1, status="pending")
    assert c.changed == ["status"] and c.task is not None and c.task.status is TaskStatus.PENDING
    assert stored_tasks(store, plan)[1]["status"] == "pending"
    # the reopened #1 now blocks #2 and #3 again
    assert store.snapshot(plan).tasks[4].blocked_by == [2, 3]
    assert list_tasks(planner, plan, status="blocked").open_blockers[2] == [1]


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


def test_metadata_merge_removes_null_keys(planner: Planner, store: PlanStore, plan: str) -> None:
    t = planner.create_task(plan, "meta", metadata={"a": 1, "b": {"x": 2}, "gone": None})
    assert t.metadata == {"a": 1, "b": {"x": 2}}
    c = planner.update_task(plan, t.id, metadata={"b": None, "c": "three"})
    assert c.changed == ["metadata"]
    assert stored_tasks(store, plan)[t.id]["metadata"] == {"a": 1, "c": "three"}


def test_only_changed_fields_are_reported_and_noop_writes_nothing(
    planner: Planner, store: PlanStore, plan: str
) -> None:
    before = stored_state(store)
    c = planner.update_task(plan, 4, subject="Add logout endpoint", owner="", metadata={})
    assert c.changed == []
    assert updated_text(4, c.changed) == "Updated task #4 (nothing changed)"
    assert stored_state(store) == before
    c = planner.update_task(plan, 4, subject="Add logout", owner="carol")
    assert c.changed == ["subject", "owner"]
    assert updated_text(4, c.changed) == "Updated task #4 subject, owner"


def test_unknown_fields_in_a_task_survive_an_update(planner: Planner, store: PlanStore, plan: str) -> None:
    add_extra_fields(store, plan, 4, priority="high", **{"x-custom": {"nested": [1, 2]}})
    planner.update_task(plan, 4, subject="Add logout endpoint v2", add_blocked_by=[1])
    planner.update_task(plan, 1, description="touch the blocker too")
    after = json.loads(stored_plan(store, plan)[2][4])  # the stored document, in its order
    assert after["priority"] == "high" and after["x-custom"] == {"nested": [1, 2]}
    assert list(after)[: len(SEED_FIELDS)] == SEED_FIELDS
    assert after["subject"] == "Add logout endpoint v2" and sorted(after["blockedBy"]) == [1, 2, 3]
    # A field of that name since: it is unset, and the document's value stays until the field is set.
    assert planner.get_task(plan, 4).priority is None
    planner.update_task(plan, 4, priority=2)
    assert json.loads(stored_plan(store, plan)[2][4])["priority"] == 2


def test_claim_is_atomic_status_and_owner(planner: Planner, store: PlanStore, plan: str) -> None:
    c = planner.update_task(plan, 4, status="completed")  # completing needs no unblocked blockers check
    planner.update_task(plan, 4, status="pending")
    planner.update_task(plan, 3, status="completed")
    c = planner.update_task(plan, 4, status="in_progress", owner="dave")
    data = stored_tasks(store, plan)[4]
    assert (data["status"], data["owner"]) == ("in_progress", "dave")
    assert c.changed == ["status", "owner"] and c.started
