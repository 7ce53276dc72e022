"""Gates, on every store: a task with `gate: "human"` is done only when a person approves
it, one with `gate: {"after": time}` once the time has passed. No agent starts or completes
a gated task, nor lifts a person's gate; the tasks behind it wait; the next claim, TaskList
and the plan's "what is left" say who they wait for and how to approve."""

from __future__ import annotations

import datetime as dt

import pytest

from planning_core import Planner, Session
from planning_core.actions import Actions
from planning_core.caller import NOBODY, Caller
from planning_core.done import DONE, GATED, OTHERS, READY, YOURS, work_left
from planning_core.errors import GateRefused, InvalidInput, NotGated, NothingReady
from planning_core.models import TaskPatch
from planning_core.store import PlanStore
from tests.support.seed import list_tasks
from tests.support.stores import reopened, stored_state, stored_tasks

T0 = dt.datetime(2026, 12, 3, 9, 0, 0, tzinfo=dt.UTC)
LATER = "2026-12-03T10:00:00Z"


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> dt.datetime:
        return self.now


def _plan(planner: Planner, gate: object = "human") -> str:
    """#1 Draft (ready), #2 Approve the schema (gated, after #1), #3 Migrate (after #2)."""
    tasks = [
        {"subject": "Draft the schema"},
        {"subject": "Approve the schema", "blockedBy": [1], "gate": gate},
        {"subject": "Migrate", "blockedBy": [2]},
    ]
    return planner.create_plan("Schema", analysis="a", approach="b", tasks=tasks).name


def test_a_human_gate_is_kept_by_the_store_and_left_out_when_there_is_none(planner: Planner, store: PlanStore) -> None:
    name = _plan(planner)
    with reopened(store) as again:
        assert again.get_task(name, 2).gate == "human"
    files = stored_tasks(store, name)
    assert files[2]["gate"] == "human"
    assert "gate" not in files[1]


def test_no_agent_starts_or_completes_a_human_gated_task(planner: Planner, store: PlanStore) -> None:
    name = _plan(planner)
    planner.update_task(name, 1, status="completed")
    before = stored_state(store)
    for status in ("in_progress", "completed"):
        with pytest.raises(GateRefused) as refused:
            planner.update_task(name, 2, status=status, owner="agent")
        assert f"planning-mcp approve {name} 2" in str(refused.value)
    with pytest.raises(GateRefused, match="remove the person's gate"):
        planner.update_task(name, 2, gate="")
    with pytest.raises(GateRefused):
        planner.update_task(name, 2, gate={"after": "2020-01-01T00:00:00Z"})
    assert stored_state(store) == before


def test_the_next_claim_names_the_person_it_waits_for_and_approval_unblocks_the_rest(
    planner: Planner, store: PlanStore
) -> None:
    name = _plan(planner)
    planner.update_task(name, "next", status="in_progress", owner="agent")
    assert planner.update_task(name, 1, status="completed").unblocked == []  # #2 waits for a person, not an agent
    assert list_tasks(planner, name, status="ready").tasks == []
    with pytest.raises(NothingReady) as nothing:
        planner.update_task(name, "next", status="in_progress", owner="agent")
    assert f"waiting for a person: #2 Approve the schema (planning-mcp approve {name} 2)" in str(nothing.value)
    assert work_left(store.view(name), T0).kind == GATED
    change = planner.approve(name, 2)
    assert change.completed and [t.id for t in change.unblocked] == [3]
    claimed = planner.update_task(name, "next", status="in_progress", owner="agent")
    assert claimed.task_id == 3
    with reopened(store) as again:
        assert again.get_task(name, 2).status.value == "completed"


def test_approve_refuses_a_task_without_a_gate_or_one_already_done(planner: Planner) -> None:
    name = _plan(planner)
    with pytest.raises(NotGated, match="has no gate"):
        planner.approve(name, 1)
    planner.approve(name, 2)
    with pytest.raises(NotGated, match="already completed"):
        planner.approve(name, 2)


def test_a_time_gate_holds_until_its_time_then_the_next_claim_completes_it(store: PlanStore) -> None:
    clock = Clock()
    planner = Planner(store, clock)
    name = _plan(planner, {"after": "2026-12-03T11:00:00+01:00"})  # 10:00 UTC
    assert store.get_task(name, 2).gate == {"after": LATER}
    planner.update_task(name, 1, status="completed")
    with pytest.raises(GateRefused, match=f"completes by itself at {LATER}"):
        planner.update_task(name, 2, status="completed")
    with pytest.raises(NothingReady, match=f"waiting for a time: #2 Approve the schema \\(at {LATER}\\)"):
        planner.update_task(name, "next", status="in_progress", owner="agent")
    clock.now = T0 + dt.timedelta(hours=1)
    claimed = planner.update_task(name, "next", status="in_progress", owner="agent")
    assert claimed.task_id == 3
    assert store.get_task(name, 2).status.value == "completed"


def test_tasklist_marks_gated_tasks_and_says_who_they_wait_for(planner: Planner) -> None:
    name = _plan(planner)
    text = Actions(planner).task_list(Caller(NOBODY, Session()), plan=name).text
    assert "#2 [pending] Approve the schema [gate: a person] [blocked by #1]" in text
    assert f"Waiting for a person: #2 Approve the schema (planning-mcp approve {name} 2)" in text
    detail = Actions(planner).task_get(Caller(NOBODY, Session()), 2, name).text
    assert "Gate: a person" in detail


@pytest.mark.parametrize(
    "gate",
    ["person", {"after": "tomorrow"}, {"after": "2026-12-03T10:00:00Z", "by": "x"}, 5, ["human"]],
)
def test_a_gate_neither_a_person_nor_a_time_is_refused(planner: Planner, store: PlanStore, gate: object) -> None:
    name = _plan(planner)
    before = stored_state(store)
    with pytest.raises(InvalidInput, match='gate must be "human"'):
        planner.update_task(name, 1, TaskPatch(gate=gate))
    with pytest.raises(InvalidInput, match="gate"):
        planner.create_plan("Bad", analysis="a", approach="b", tasks=[{"subject": "x", "gate": gate}])
    assert stored_state(store) == before


def test_what_is_left_names_your_task_then_ready_work_then_others_then_the_gate(planner: Planner) -> None:
    name = _plan(planner)
    assert work_left(planner.store.view(name), T0).kind == READY
    planner.update_task(name, 1, status="in_progress", owner="me")
    left = work_left(planner.store.view(name), T0, mine=("me",))
    assert (left.kind, left.doable) == (YOURS, True)
    assert "#1 Draft the schema is in progress (me)" in left.line
    left = work_left(planner.store.view(name), T0, mine=("someone else",))
    assert (left.kind, left.doable) == (OTHERS, False)
    planner.update_task(name, 1, status="completed")
    planner.approve(name, 2)
    planner.update_task(name, 3, status="completed")
    assert work_left(planner.store.view(name), T0).kind == DONE
