"""A former owner cannot undo a take-over, on every store: once its lease ran out and
another owner took the task, its update (complete, edit, release, delete, a heartbeat;
naming itself, or known by its session's claim) is refused naming the new owner and
changes nothing, while the new owner's heartbeat keeps working. Taking the task back is
a claim like any other, once the new owner's lease has run out too.

Time is the planner's clock, moved by hand (as in test_leases.py)."""

from __future__ import annotations

from typing import Any

import pytest

from planning_core import Session, TaskStatus
from planning_core.actions import Actions
from planning_core.caller import NOBODY, Caller
from planning_core.errors import TakenOver
from planning_core.session import MAX_CLAIMS_KEPT
from planning_core.store import PlanStore
from tests.support.clock import Clock
from tests.support.seed import seed_plan
from tests.support.stores import stored_state

LEASE = 60


@pytest.fixture
def plan(actions: Actions) -> str:
    """The seed (#3 ready; #4 waits on #3), nothing in progress."""
    return seed_plan(actions.planner, in_progress=False)


def taken_over(actions: Actions, plan: str, clock: Clock) -> tuple[Caller, Caller]:
    """alice claims the next task (#3) in her session; her lease runs out; bob takes it
    over through "next" in his. (alice's session, bob's session)."""
    alice, bob = Caller(NOBODY, Session()), Caller(NOBODY, Session())
    claim = {"status": "in_progress", "lease_seconds": LEASE, "plan": plan}
    assert actions.task_update(alice, "next", owner="alice", **claim).data.task_id == 3
    clock.set(LEASE + 1)
    assert actions.task_update(bob, "next", owner="bob", **claim).data.task_id == 3
    return alice, bob


STALE_UPDATES: list[dict[str, Any]] = [
    {"status": "completed"},
    {"status": "pending"},
    {"status": "deleted"},
    {"description": "my late notes"},
    {"metadata": {"step": 9}},
    {"addBlockedBy": [1]},
    {},  # a bare heartbeat
]


@pytest.mark.parametrize("named", [True, False], ids=["naming-itself", "by-session"])
@pytest.mark.parametrize("change", STALE_UPDATES, ids=lambda c: ",".join(c) or "heartbeat")
def test_the_former_owner_is_refused_naming_the_new_one(
    actions: Actions, store: PlanStore, plan: str, clock: Clock, change: dict[str, Any], named: bool
) -> None:
    alice, _ = taken_over(actions, plan, clock)
    if not change and not named:
        change = {"activeForm": "Still at it"}  # an unnamed heartbeat is an edit
    before = stored_state(store)
    fields = {k: v for k, v in change.items() if k != "addBlockedBy"}
    with pytest.raises(TakenOver) as refused:
        actions.task_update(
            alice if not named else Caller(NOBODY, Session()),
            3,
            plan=plan,
            add_blocked_by=change.get("addBlockedBy"),
            **fields,
            **({"owner": "alice"} if named else {}),
        )
    text = str(refused.value)
    assert "taken over by 'bob'" in text and "lease of 'alice' ran out" in text and "Nothing was changed" in text, text
    assert stored_state(store) == before


def test_the_new_owner_keeps_working_and_completes(actions: Actions, plan: str, clock: Clock) -> None:
    alice, bob = taken_over(actions, plan, clock)
    clock.set(LEASE + 30)
    assert actions.task_update(bob, 3, plan=plan, owner="bob").data.changed == ["leaseExpiresAt"]
    with pytest.raises(TakenOver):
        actions.task_update(alice, 3, plan=plan, status="completed")
    # bob's update naming no owner is his session's, and he holds the task.
    assert actions.task_update(bob, 3, plan=plan, status="completed").data.status == "completed"
    task = actions.planner.get_task(plan, 3)
    assert (task.status, task.owner) == (TaskStatus.COMPLETED, "bob")


def test_the_former_owner_takes_it_back_once_the_new_lease_runs_out_too(
    actions: Actions, plan: str, clock: Clock
) -> None:
    alice, _ = taken_over(actions, plan, clock)
    clock.set(3 * LEASE)  # bob's lease ran out as well
    with pytest.raises(TakenOver):
        actions.task_update(alice, 3, plan=plan, status="completed")  # not a claim: still bob's
    claim = {"status": "in_progress", "owner": "alice", "lease_seconds": LEASE, "plan": plan}
    assert actions.task_update(alice, "next", **claim).data.task_id == 3
    assert actions.task_update(alice, 3, plan=plan, status="completed").data.status == "completed"


def test_a_session_forgets_a_claim_it_finished_and_keeps_a_bounded_few(actions: Actions, plan: str) -> None:
    session = Session()
    caller = Caller(NOBODY, session)
    actions.task_update(caller, 3, plan=plan, status="in_progress", owner="alice")
    assert session.claimed_as(plan, 3) == "alice"
    actions.task_update(caller, 3, plan=plan, status="completed")
    assert session.claimed_as(plan, 3) is None
    for i in range(MAX_CLAIMS_KEPT + 5):
        session.keep_claim(plan, 100 + i, f"o{i}")
    assert len(session.claims) == MAX_CLAIMS_KEPT and session.claimed_as(plan, 100) is None
    assert Session.from_state(session.to_state()).claims == session.claims  # a shared store keeps them
