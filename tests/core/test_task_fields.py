"""A task's fields, wherever they must appear: a field added to `Task` or `TaskPatch` and left
out of one of these places fails here instead of being dropped without a word."""

from __future__ import annotations

import dataclasses

from planning_core import Planner, Session, rows
from planning_core.actions import Actions
from planning_core.models import Task, TaskPatch
from planning_core.outcomes import TaskRow
from planning_core.store import PlanStore
from planning_core.update import TRACKED, UNTRACKED, changed_fields, checked
from server.board.data import STATUS_FIELDS, board_data, plan_data
from tests.support.seed import seed_plan

EDGE_FIELDS = {"add_blocked_by", "add_blocks", "remove_blocked_by", "remove_blocks"}

# A valid value for every TaskPatch field; a field missing here fails the first test.
PATCH_VALUES = {
    "status": "in_progress",
    "subject": "New subject",
    "description": "New description",
    "active_form": "Doing it",
    "owner": "alice",
    "add_blocked_by": [2],
    "add_blocks": ["#3"],
    "remove_blocked_by": ["4"],
    "remove_blocks": [5],
    "metadata": {"k": "v"},
    "lease_seconds": 60,
}


def test_every_task_field_is_tracked_by_taskupdate_or_named_untracked() -> None:
    assert set(TRACKED) | set(UNTRACKED) == set(Task.model_fields)
    assert not set(TRACKED) & set(UNTRACKED)


def test_a_change_to_any_tracked_field_is_named_in_the_answer() -> None:
    before = Task(id=1, subject="s")
    changes = {
        "subject": "t",
        "description": "d",
        "active_form": "a",
        "status": "completed",
        "owner": "o",
        "blocked_by": [2],
        "blocks": [3],
        "metadata": {"k": 1},
        "lease_seconds": 5,
        "lease_expires_at": "2026-01-01T00:00:00Z",
    }
    assert set(changes) == set(TRACKED)
    for name, value in changes.items():
        after = before.model_copy(update={name: value})
        assert changed_fields(before, after) == [Task.model_fields[name].alias or name]


def test_checked_keeps_every_field_of_the_patch() -> None:
    assert set(PATCH_VALUES) == {f.name for f in dataclasses.fields(TaskPatch)}
    fields, edges = checked(TaskPatch(**PATCH_VALUES))  # type: ignore[arg-type]
    for name, value in PATCH_VALUES.items():
        if name in EDGE_FIELDS:
            assert getattr(edges, name), name
        else:
            assert getattr(fields, name) == value, name


def test_a_clone_shares_no_container_with_its_original() -> None:
    task = Task(id=1, subject="s", blocked_by=[2], blocks=[3], metadata={"n": {"deep": [1]}}, extraField=[1])
    copy = task.clone()
    assert copy == task
    for name, value in copy.__dict__.items():
        if isinstance(value, (list, dict)):
            assert value is not task.__dict__[name], name
    copy.metadata["n"]["deep"].append(2)
    assert task.metadata == {"n": {"deep": [1]}}


# -- one task row ------------------------------------------------------------------------


def test_every_row_field_is_copied_from_the_task_or_worked_out_from_the_plan() -> None:
    assert set(rows.COPIED) <= set(Task.model_fields)
    assert set(rows.COPIED) | set(rows.COMPUTED) == set(TaskRow.model_fields)


def test_tasklist_taskcreate_and_every_board_show_one_row(planner: Planner, store: PlanStore) -> None:
    """TaskList's rows, TaskCreate's task, `board --json`, `status --json`, the web board and
    the MCP App's data show each task's row fields alike: one row, made once (rows.py)."""
    name = seed_plan(planner)
    actions, session = Actions(planner), Session()
    created = actions.task_create(session, "Write the docs", plan=name, blocked_by=[3], owner="bob").structured()
    listed = {row["id"]: row for row in actions.task_list(session, plan=name).structured()["tasks"]}
    assert listed[created["task"]["id"]] == created["task"]
    snap = store.snapshot(name)
    board = {row["id"]: row for row in plan_data(snap, detail=True)["tasks"]}
    status = {row["id"]: row for row in plan_data(snap, detail=False)["tasks"]}
    web = {row["id"]: row for row in board_data(store, name)["plan"]["tasks"]}
    aliases = [TaskRow.model_fields[f].alias or f for f in rows.COPIED]
    assert sorted(listed) == sorted(board) == sorted(status) == sorted(web) == sorted(snap.tasks)
    for task_id, row in listed.items():
        shown = {
            a: row.get(a, TaskRow.model_fields[f].get_default(call_default_factory=True))
            for f, a in zip(rows.COPIED, aliases, strict=True)
        }
        assert {a: board[task_id][a] for a in aliases} == shown
        assert {a: web[task_id][a] for a in aliases} == shown
        assert board[task_id]["openBlockers"] == row.get("blockedBy", [])
        assert status[task_id] == {k: board[task_id][k] for k in STATUS_FIELDS}


def test_a_transactions_snapshot_derives_blocks_after_its_staged_changes(planner: Planner, store: PlanStore) -> None:
    """Every store alike: inside a transaction, a task staged as blocked by another shows in
    that one's `blocks` (the archive and create checks read this snapshot)."""
    name = seed_plan(planner)
    with store.transaction(name) as txn:
        new = Task(id=txn.next_id(), subject="Staged", blocked_by=[1])
        txn.put(new)
        snap = txn.snapshot()
        assert new.id in snap.tasks[1].blocks
        assert snap.tasks[new.id].blocked_by == [1]
        txn.delete(new.id)
        assert new.id not in txn.snapshot().tasks[1].blocks
