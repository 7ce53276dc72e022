"""Handoff notes, on every store: TaskUpdate `note` appends a note (who, when, the text)
that is never replaced; TaskGet shows the latest few, the board all; every store keeps
them across a restart, and `copy` carries them. A note is refused where it cannot be
kept (too long, a task full of notes, with a claim of "next"), changing nothing; a former
owner whose task was taken over may still leave one."""

from __future__ import annotations

import datetime as dt

import pytest

from planning_core import Session
from planning_core.actions import Actions
from planning_core.caller import NOBODY, Caller
from planning_core.errors import InvalidInput, TakenOver
from planning_core.import_export.copying import copy_plans
from planning_core.models import MAX_NOTE, MAX_NOTES
from planning_core.rendering.render import NOTES_SHOWN
from planning_core.store import PlanStore
from server.board.data import plan_data
from tests.support.clock import T0, Clock
from tests.support.seed import seed_plan
from tests.support.stores import make_store, reopened, stored_state, stored_tasks


@pytest.fixture
def plan(actions: Actions) -> str:
    return seed_plan(actions.planner, in_progress=False)


def test_a_note_is_appended_with_who_and_when_and_never_replaced(
    actions: Actions, store: PlanStore, plan: str, clock: Clock
) -> None:
    alice = Caller(NOBODY, Session())
    actions.task_update(alice, 3, plan=plan, status="in_progress", owner="alice")
    answer = actions.task_update(alice, 3, plan=plan, note="schema done;\nroutes next")
    assert answer.text == "Updated task #3 notes" and answer.data.changed == ["notes"]
    clock.now = T0 + dt.timedelta(seconds=5)
    actions.task_update(Caller(NOBODY, Session()), 3, plan=plan, note="reviewed", owner="alice")  # named: by alice
    actions.task_update(
        Caller(NOBODY, Session()), 3, plan=plan, note="from a stranger"
    )  # no owner, no claim: the writer
    actions.task_update(alice, 3, plan=plan, description="new text", metadata={"k": 1})
    with reopened(store) as again:
        notes = again.get_task(plan, 3).notes
    assert notes == [
        {"by": "alice", "at": "2026-05-28T09:00:00Z", "text": "schema done;\nroutes next"},
        {"by": "alice", "at": "2026-05-28T09:00:05Z", "text": "reviewed"},
        {"by": "-", "at": "2026-05-28T09:00:05Z", "text": "from a stranger"},
    ]
    assert stored_tasks(store, plan)[3]["notes"] == notes
    assert "notes" not in stored_tasks(store, plan)[4]  # a task without notes is stored as before


def test_taskget_shows_the_latest_few_and_the_board_all(actions: Actions, store: PlanStore, plan: str) -> None:
    for n in range(NOTES_SHOWN + 2):
        actions.task_update(Caller(NOBODY, Session()), 3, plan=plan, note=f"note {n}")
    text = actions.task_get(Caller(NOBODY, Session()), 3, plan=plan).text
    assert f"Notes (latest {NOTES_SHOWN} of {NOTES_SHOWN + 2}):" in text
    assert "note 0" not in text and "note 1" not in text
    assert f"- 2026-05-28T09:00:00Z -: note {NOTES_SHOWN + 1}" in text.splitlines()
    [row] = [r for r in plan_data(store.snapshot(plan), detail=True)["tasks"] if r["id"] == 3]
    assert [n["text"] for n in row["notes"]] == [f"note {n}" for n in range(NOTES_SHOWN + 2)]


def test_copy_carries_the_notes(actions: Actions, store: PlanStore, plan: str, tmp_path: object) -> None:
    actions.task_update(Caller(NOBODY, Session()), 3, plan=plan, note="carry me", owner="bob")
    other = make_store("memory", tmp_path)  # type: ignore[arg-type]
    try:
        copy_plans(store, other)
        assert other.get_task(plan, 3).notes == store.get_task(plan, 3).notes
    finally:
        other.close()


def test_a_note_that_cannot_be_kept_is_refused_and_changes_nothing(
    actions: Actions, store: PlanStore, plan: str
) -> None:
    before = stored_state(store)
    for bad in ("", "   ", "x" * (MAX_NOTE + 1), "bell\x07"):
        with pytest.raises(InvalidInput, match="note"):
            actions.task_update(Caller(NOBODY, Session()), 3, plan=plan, note=bad)
    with pytest.raises(InvalidInput, match="it also asks to change note"):
        actions.task_update(Caller(NOBODY, Session()), "next", plan=plan, status="in_progress", owner="a", note="hi")
    assert stored_state(store) == before
    for n in range(MAX_NOTES):
        actions.planner.update_task(plan, 4, note=f"n{n}")
    full = stored_state(store)
    with pytest.raises(InvalidInput, match=f"holds {MAX_NOTES} notes"):
        actions.task_update(Caller(NOBODY, Session()), 4, plan=plan, note="one more")
    assert stored_state(store) == full


def test_a_former_owner_may_still_leave_a_note(actions: Actions, plan: str, clock: Clock) -> None:
    alice, bob = Caller(NOBODY, Session()), Caller(NOBODY, Session())
    claim = {"status": "in_progress", "lease_seconds": 60, "plan": plan}
    actions.task_update(alice, "next", owner="alice", **claim)
    clock.now = T0 + dt.timedelta(seconds=61)
    actions.task_update(bob, "next", owner="bob", **claim)
    with pytest.raises(TakenOver):
        actions.task_update(alice, 3, plan=plan, note="half done", status="completed")
    actions.task_update(alice, 3, plan=plan, note="the migration is half done")
    task = actions.planner.get_task(plan, 3)
    assert task.owner == "bob" and task.notes[-1]["by"] == "alice"
