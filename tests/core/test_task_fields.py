"""A task's fields, wherever they must appear: a field added to `Task` or `TaskPatch` and left
out of one of these places fails here instead of being dropped without a word."""

from __future__ import annotations

import dataclasses

from planning_core.models import Task, TaskPatch
from planning_core.update import TRACKED, UNTRACKED, changed_fields, checked

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
