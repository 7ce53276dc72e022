"""A task's fields, wherever they must appear. Each field a caller sets is stated once, on
Task (models.FieldRule); a field added there and left out of one of the places it must reach
(checked, applied, named in TaskUpdate's answer, kept by every store) fails here instead of
being dropped without a word. tests/server/test_task_fields_tools.py checks the tools."""

from __future__ import annotations

from typing import Any

import pytest

from planning_core import Planner, Session
from planning_core.actions import Actions
from planning_core.caller import NOBODY, Caller
from planning_core.models import RULES, SETTABLE, TRACKED, UNTRACKED, WIRE, NewTask, Task, TaskPatch, TaskSpec
from planning_core.outcomes import TaskRow
from planning_core.rendering import render, rows
from planning_core.store import PlanStore
from planning_core.update import changed_fields, checked
from server.board.data import STATUS_FIELDS, board_data, plan_data
from tests.support.seed import seed_plan
from tests.support.stores import reopened, stored_tasks

# What TaskCreate sends for every settable field, and what TaskUpdate then sends and keeps
# (sent, kept). A field missing here fails test_the_samples_name_every_settable_field.
CREATE: dict[str, Any] = {
    "subject": "Write the parser",
    "description": "line one\nline two",
    "active_form": "Writing the parser",
    "owner": "alice",
    "metadata": {"k": "v"},
    "priority": 1,
    "labels": ["api", "auth"],
    "parent": 1,  # the plan's first task
    "gate": {"after": "2030-01-01T00:00:00Z"},
    "acceptance": ["returns 401 on a bad password", "logs the failure"],
}
UPDATE: dict[str, tuple[Any, Any]] = {
    "subject": ("Rewrite the parser", "Rewrite the parser"),
    "description": ("another text", "another text"),
    "active_form": ("Rewriting it", "Rewriting it"),
    "owner": ("bob", "bob"),
    "metadata": ({"n": 1, "k": None}, {"n": 1}),
    "priority": (0, 0),
    "labels": (["b", "a", "b"], ["b", "a"]),
    "parent": (0, None),  # 0 removes it
    "gate": ("human", "human"),  # a stricter gate; an agent never lifts a person's
    "acceptance": ([" logs the failure", "logs the failure"], ["logs the failure"]),
}
# A value different from a new task's for every tracked field.
CHANGED: dict[str, Any] = {
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
    "priority": 2,
    "labels": ["x"],
    "parent": 4,
    "gate": "human",
    "acceptance": ["done"],
    "notes": [{"by": "a", "at": "2026-01-01T00:00:00Z", "text": "n"}],
}


def test_the_samples_name_every_settable_field() -> None:
    assert set(CREATE) == set(UPDATE) == set(SETTABLE)
    assert set(CHANGED) == set(TRACKED)


def test_every_task_field_is_tracked_by_taskupdate_or_named_untracked() -> None:
    assert set(TRACKED) | set(UNTRACKED) == set(Task.model_fields)
    assert not set(TRACKED) & set(UNTRACKED)
    assert set(RULES) <= set(TRACKED)


def test_a_change_to_any_tracked_field_is_named_in_the_answer() -> None:
    before = Task(id=1, subject="s")
    for name, value in CHANGED.items():
        after = before.model_copy(update={name: value})
        assert changed_fields(before, after) == [WIRE[name]]


def test_planCreates_task_takes_every_field_whose_rule_says_so() -> None:
    in_plan = {name for name, rule in RULES.items() if rule.in_plan is not None}
    assert set(TaskSpec.model_fields) == in_plan
    assert {f.alias for f in TaskSpec.model_fields.values()} == {WIRE[n] for n in in_plan}


def test_taskgets_text_shows_every_settable_field() -> None:
    """TaskGet's text (render.task_detail) of a task with every field set changes when any one
    of them is left at a new task's value: each field has its line."""
    full = Task(id=1, **CREATE)
    new = Task(id=1, subject=full.subject)
    for name in SETTABLE:
        if name != "subject":  # the heading: shown as long as there is a task
            without = full.model_copy(update={name: getattr(new, name)})
            assert render.task_detail(without, []) != render.task_detail(full, []), f"TaskGet does not show {name}"


def test_checked_keeps_every_field_of_the_patch_by_either_name() -> None:
    for names in (lambda n: n, lambda n: WIRE[n]):
        sent = {names(n): sent for n, (sent, _) in UPDATE.items()}
        patch, _ = checked(TaskPatch(status="in_progress", add_blocked_by=[2], lease_seconds=60, **sent))
        assert list(patch.values) == list(UPDATE)  # every field, none dropped
        assert (patch.status, patch.lease_seconds) == ("in_progress", 60)


def test_a_field_no_caller_sets_is_refused_not_dropped() -> None:
    with pytest.raises(TypeError, match="blocks"):
        TaskPatch(blocks=[2])
    with pytest.raises(TypeError, match="createdAt"):
        NewTask("s", createdAt="2026-01-01T00:00:00Z")


def test_every_settable_field_is_created_updated_named_and_kept_by_the_store(
    planner: Planner, store: PlanStore
) -> None:
    plan = planner.create_plan("Fields", analysis="a", approach="b", tasks=[{"subject": "first"}]).name
    task = planner.create_task(plan, NewTask(**CREATE))
    with reopened(store) as again:
        kept = again.get_task(plan, task.id)
    for name, value in CREATE.items():
        assert getattr(kept, name) == value, name
        assert stored_tasks(store, plan)[task.id][WIRE[name]] == value, name
    for name, (sent, expected) in UPDATE.items():
        change = planner.update_task(plan, task.id, TaskPatch(**{name: sent}))
        assert change.changed == [WIRE[name]], name
        with reopened(store) as again:
            assert getattr(again.get_task(plan, task.id), name) == expected, name


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
    actions, session = Actions(planner), Caller(NOBODY, Session())
    created = actions.task_create(session, "Write the docs", plan=name, blocked_by=[3], owner="bob").structured()
    listed = {row["id"]: row for row in actions.task_list(session, plan=name).structured()["tasks"]}
    assert listed[created["task"]["id"]] == created["task"]
    snap = store.snapshot(name)
    board = {row["id"]: row for row in plan_data(snap, detail=True)["tasks"]}
    status = {row["id"]: row for row in plan_data(snap, detail=False)["tasks"]}
    web = {row["id"]: row for row in board_data(actions, name)["plan"]["tasks"]}
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
