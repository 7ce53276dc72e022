"""A task's acceptance criteria on every store: set by PlanCreate, TaskCreate and TaskUpdate,
each kept once and stripped, replaced and cleared by TaskUpdate, absent from the file while
there are none, shown by TaskGet and the board; bad ones refused, changing nothing."""

from __future__ import annotations

import datetime as dt

import pytest

from planning_core import InvalidInput, Planner, PlanningError
from planning_core.done import work_left
from planning_core.models import MAX_CRITERIA, TaskPatch, named_checks
from planning_core.rendering.render import task_detail, task_line
from planning_core.store import PlanStore
from planning_core.verify import Verification
from server.board.data import plan_data
from tests.support.stores import stored_state, stored_tasks


def _plan(planner: Planner) -> str:
    tasks = [{"subject": "Login", "acceptance": ["returns 401", " returns 401 ", "check:tests"]}, {"subject": "Docs"}]
    return planner.create_plan("Auth", analysis="a", approach="b", tasks=tasks).name


def test_set_kept_once_replaced_cleared_and_absent_from_the_file_without_any(
    planner: Planner, store: PlanStore
) -> None:
    plan = _plan(planner)
    stored = stored_tasks(store, plan)
    assert stored[1]["acceptance"] == ["returns 401", "check:tests"]
    assert "acceptance" not in stored[2]
    planner.update_task(plan, 2, acceptance=["README names it"])
    assert stored_tasks(store, plan)[2]["acceptance"] == ["README names it"]
    change = planner.update_task(plan, 1, acceptance=[])
    assert change.changed == ["acceptance"]
    assert "acceptance" not in stored_tasks(store, plan)[1]
    created = planner.create_task(plan, "More", acceptance=["a", "b"])
    assert stored_tasks(store, plan)[created.id]["acceptance"] == ["a", "b"]


def test_taskget_and_the_board_show_them(planner: Planner, store: PlanStore) -> None:
    plan = _plan(planner)
    snap = store.snapshot(plan)
    assert "\nAcceptance:\n- [ ] returns 401\n- [ ] check:tests\n" in task_detail(snap.tasks[1], [])
    assert "Acceptance" not in task_detail(snap.tasks[2], [])
    rows = {row["id"]: row for row in plan_data(snap, detail=True)["tasks"]}
    assert rows[1]["acceptance"] == ["returns 401", "check:tests"] and rows[2]["acceptance"] == []


def test_the_checks_a_task_names() -> None:
    assert named_checks(["check:tests", "check: lint", "check:tests", "check the logs", "check:a b", "x"]) == [
        "tests",
        "lint",
    ]


@pytest.mark.parametrize(
    "acceptance",
    [
        "returns 401",
        [""],
        ["   "],
        [1],
        ["x" * 201],
        ["two\nlines"],
        ["bell\x07"],
        [f"c{i}" for i in range(MAX_CRITERIA + 1)],
    ],
)
def test_bad_criteria_are_refused_and_change_nothing(planner: Planner, store: PlanStore, acceptance: object) -> None:
    plan = _plan(planner)
    before = stored_state(store)
    with pytest.raises(InvalidInput, match="acceptance"):
        planner.update_task(plan, 2, acceptance=acceptance)
    with pytest.raises(InvalidInput, match="acceptance"):
        planner.create_task(plan, "New", acceptance=acceptance)
    with pytest.raises(PlanningError, match="acceptance"):
        planner.create_plan("Bad", analysis="a", approach="b", tasks=[{"subject": "s", "acceptance": acceptance}])
    assert stored_state(store) == before


def test_what_is_left_tells_an_agent_whose_task_is_being_verified_to_wait_for_the_result(
    planner: Planner, store: PlanStore
) -> None:
    """The Stop hook's and `status --check-done`'s line: the checks run, so the next step is
    to read the result; once the record's `until` has passed, the run counts as interrupted."""
    plan = _plan(planner)
    planner.update_task(plan, 1, status="in_progress", owner="me")
    now = dt.datetime(2026, 12, 3, 9, 0, tzinfo=dt.UTC)
    running = {"state": "running", "checks": ["tests"], "run": "r1", "until": "2026-12-03T09:05:00Z"}
    planner.update_task(plan, 1, TaskPatch(), verification=Verification(running))
    left = work_left(store.view(plan), now, mine=("me",))
    assert left.doable and "#1 Login is in progress (me). Its checks are running: TaskGet #1" in left.line
    later = work_left(store.view(plan), now + dt.timedelta(minutes=6), mine=("me",))
    assert "Finish it, then TaskUpdate #1 status completed." in later.line
    assert "(checks running)" in task_line(store.view(plan).tasks[1])


@pytest.mark.parametrize(
    ("until", "running"),
    [
        ("2026-12-03T09:10:00", True),  # written by hand without a zone: read as UTC
        ("2026-12-03T10:05:00+01:00", False),  # 09:05 UTC is not after 09:06
        ("9999-12-31T23:59:59-14:00", True),  # past what UTC can hold: never ends
        ("soon", False),
        (None, False),
    ],
)
def test_a_hand_written_until_is_read_as_any_stored_time_never_an_error(
    planner: Planner, store: PlanStore, until: str | None, running: bool
) -> None:
    """What is left, for a record whose `until` a person wrote: no zone is UTC, a time
    outside UTC's range is its last moment, no time is a run that has ended."""
    plan = _plan(planner)
    planner.update_task(plan, 1, status="in_progress", owner="me")
    record = {"state": "running", "checks": ["tests"], "run": "r1", "until": until}
    planner.update_task(plan, 1, TaskPatch(), verification=Verification(record))
    left = work_left(store.view(plan), dt.datetime(2026, 12, 3, 9, 6, tzinfo=dt.UTC), mine=("me",))
    assert ("Its checks are running" in left.line) is running, left.line
