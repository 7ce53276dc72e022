"""Claims with a lease, on every store: while the lease runs another owner
is refused; an update naming the owner renews it; once it has run out the task is
claimable (TaskList `ready`, TaskPage.claimable, the board's mark) and another owner may
take it, the hand-over kept in metadata.claimHistory within the metadata bound. Without a
lease a claim is what it always was.

Time is the planner's clock: these tests pass one they move by hand, so an expiry is
an instant, not a wait. One test uses the real clock with a 1 s lease."""

from __future__ import annotations

import datetime as dt
import time

import pytest

from planning_core import Planner, Session, TaskStatus
from planning_core.actions import Actions
from planning_core.caller import NOBODY, Caller
from planning_core.errors import ClaimConflict, InvalidInput, TaskBlocked
from planning_core.models import MAX_METADATA_BYTES, metadata_size
from planning_core.rendering.render import CLAIMABLE_MARK, task_board
from planning_core.store import PlanStore
from planning_core.update import CLAIM_HISTORY, CLAIM_HISTORY_KEPT, MAX_LEASE_SECONDS
from tests.support.clock import T0, Clock
from tests.support.seed import list_tasks, seed_plan
from tests.support.stores import reopened, stored_state, stored_tasks
from tests.support.waits import bound

LEASE = 60


def at(seconds: float) -> str:
    return (T0 + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def lp(store: PlanStore, clock: Clock) -> Planner:
    return Planner(store, clock)


@pytest.fixture
def plan(lp: Planner) -> str:
    """The seed (#1, #2 done; #3 ready; #4 waits on #3), nothing in progress."""
    return seed_plan(lp, in_progress=False)


def claim(lp: Planner, plan: str, owner: str, lease: int | None = LEASE, task: int = 3) -> list[str]:
    return lp.update_task(plan, task, status="in_progress", owner=owner, lease_seconds=lease).changed


def ready(lp: Planner, plan: str) -> list[int]:
    return [t.id for t in list_tasks(lp, plan, status="ready").tasks]


def test_a_claim_without_a_lease_is_as_before(lp: Planner, store: PlanStore, plan: str, clock: Clock) -> None:
    assert claim(lp, plan, "alice", lease=None) == ["status", "owner"]
    doc = stored_tasks(store, plan)[3]
    assert "leaseSeconds" not in doc and "leaseExpiresAt" not in doc  # stored exactly as before
    clock.set(10 * MAX_LEASE_SECONDS)
    with pytest.raises(ClaimConflict, match="alice"):
        claim(lp, plan, "bob", lease=None)
    assert 3 not in ready(lp, plan) and list_tasks(lp, plan).claimable == []
    # As always: a new owner alone is a reassignment, and a lease-less claim never lapses.
    assert lp.update_task(plan, 3, owner="bob").changed == ["owner"]
    assert "claimHistory" not in stored_tasks(store, plan)[3]["metadata"]


def test_a_leased_claim_refuses_every_other_owner_while_it_runs(
    lp: Planner, store: PlanStore, plan: str, clock: Clock
) -> None:
    assert claim(lp, plan, "alice") == ["status", "owner", "leaseSeconds", "leaseExpiresAt"]
    doc = stored_tasks(store, plan)[3]
    assert (doc["leaseSeconds"], doc["leaseExpiresAt"]) == (LEASE, at(LEASE))
    clock.set(LEASE - 1)
    before = stored_state(store)
    with pytest.raises(ClaimConflict, match="alice"):
        claim(lp, plan, "bob")
    with pytest.raises(ClaimConflict, match="alice"):
        claim(lp, plan, "bob", lease=None)
    # Under a lease a bare owner change is refused too: a stale owner's heartbeat must
    # not take a task back from the one holding it.
    with pytest.raises(ClaimConflict, match="alice"):
        lp.update_task(plan, 3, owner="bob")
    assert stored_state(store) == before
    assert 3 not in ready(lp, plan)


def test_an_update_naming_the_owner_renews_the_lease(lp: Planner, store: PlanStore, plan: str, clock: Clock) -> None:
    claim(lp, plan, "alice")
    clock.set(50)
    change = lp.update_task(plan, 3, owner="alice", metadata={"step": 2})
    assert change.changed == ["metadata", "leaseExpiresAt"]
    assert stored_tasks(store, plan)[3]["leaseExpiresAt"] == at(50 + LEASE)
    clock.set(100)  # past the first expiry, inside the renewed one
    with pytest.raises(ClaimConflict):
        claim(lp, plan, "bob")
    # A heartbeat with nothing else: the renewal is the change.
    assert lp.update_task(plan, 3, owner="alice").changed == ["leaseExpiresAt"]
    # An update that does not name the owner says nothing about who sent it: no renewal.
    clock.set(120)
    assert lp.update_task(plan, 3, description="more").changed == ["description"]
    assert stored_tasks(store, plan)[3]["leaseExpiresAt"] == at(100 + LEASE)
    # A new length, from the owner.
    lp.update_task(plan, 3, owner="alice", lease_seconds=600)
    doc = stored_tasks(store, plan)[3]
    assert (doc["leaseSeconds"], doc["leaseExpiresAt"]) == (600, at(720))


def test_an_expired_claim_is_ready_and_marked_claimable(lp: Planner, plan: str, clock: Clock) -> None:
    claim(lp, plan, "alice")
    clock.set(LEASE - 1)
    page = list_tasks(lp, plan)
    assert page.claimable == [] and 3 not in ready(lp, plan)
    clock.set(LEASE)  # the instant it runs out
    page = list_tasks(lp, plan)
    assert page.claimable == [3]
    assert ready(lp, plan) == [3]
    assert [t.id for t in list_tasks(lp, plan, status="in_progress").tasks] == [3]  # its status is as stored
    board = task_board(page.plan, page.tasks, page.open_blockers, claimable=page.claimable)
    assert "#3 [in_progress] Add login endpoint (alice) " + CLAIMABLE_MARK in board.splitlines()
    assert sum(CLAIMABLE_MARK in line for line in board.splitlines()) == 1


def test_a_kept_taskList_page_shows_a_lease_running_out_with_no_write_between(
    lp: Planner, plan: str, clock: Clock
) -> None:
    """TaskList pages are kept while their plan is unchanged (planning_core/pages.py): a
    lease running out changes no file, yet the next answer must mark the claim."""
    actions = Actions(lp)
    claim(lp, plan, "alice")
    clock.set(LEASE - 1)
    for status in (None, "ready"):
        for _ in range(2):  # asked twice: the second may be a kept page
            answer = actions.task_list(Caller(NOBODY, Session()), plan, status=status)
            assert CLAIMABLE_MARK not in answer.text
            assert all(not row.get("claimable") for row in answer.structured()["tasks"])
    assert 3 not in [
        row["id"] for row in actions.task_list(Caller(NOBODY, Session()), plan, status="ready").structured()["tasks"]
    ]
    clock.set(LEASE)
    answer = actions.task_list(Caller(NOBODY, Session()), plan)
    assert "#3 [in_progress] Add login endpoint (alice) " + CLAIMABLE_MARK in answer.text.splitlines()
    assert [row["id"] for row in answer.structured()["tasks"] if row.get("claimable")] == [3]
    assert [
        row["id"] for row in actions.task_list(Caller(NOBODY, Session()), plan, status="ready").structured()["tasks"]
    ] == [3]


def test_an_expired_claim_with_a_reopened_blocker_is_blocked_not_ready(lp: Planner, plan: str, clock: Clock) -> None:
    claim(lp, plan, "alice")
    lp.update_task(plan, 1, status="pending")  # #3 waits on #1 again
    clock.set(LEASE)
    assert ready(lp, plan) == [1]
    assert 3 in [t.id for t in list_tasks(lp, plan, status="blocked").tasks]
    with pytest.raises(TaskBlocked):
        claim(lp, plan, "bob")  # taking it over is starting it: the same rule
    # Completing the blocker names it as unblocked, as it names a pending task.
    assert [t.id for t in lp.update_task(plan, 1, status="completed").unblocked] == [3]


def test_another_owner_takes_an_expired_claim_and_the_hand_over_is_kept(
    lp: Planner, store: PlanStore, plan: str, clock: Clock
) -> None:
    claim(lp, plan, "alice")
    clock.set(LEASE + 5)
    change = lp.update_task(plan, 3, status="in_progress", owner="bob")
    assert change.changed == ["owner", "metadata", "leaseExpiresAt"]
    assert not change.started  # it was in progress all along
    with reopened(store) as again:
        task = Planner(again, clock).get_task(plan, 3)
    assert (task.status, task.owner, task.lease_seconds) == (TaskStatus.IN_PROGRESS, "bob", LEASE)
    assert task.lease_expires_at == at(LEASE + 5 + LEASE)  # the length is kept for the new owner
    assert task.metadata[CLAIM_HISTORY] == [
        {"owner": "alice", "expiredAt": at(LEASE), "takenAt": at(LEASE + 5), "by": "bob"}
    ]
    # Now bob holds it: alice coming back is refused, heartbeat or claim.
    with pytest.raises(ClaimConflict, match="bob"):
        lp.update_task(plan, 3, owner="alice")
    with pytest.raises(ClaimConflict, match="bob"):
        claim(lp, plan, "alice")


def test_the_claim_history_keeps_the_last_few_and_the_metadata_bound(lp: Planner, plan: str, clock: Clock) -> None:
    claim(lp, plan, "w0")
    owners = [f"w{i}" for i in range(1, CLAIM_HISTORY_KEPT + 4)]
    for i, owner in enumerate(owners, start=1):
        clock.set(i * 1000)
        claim(lp, plan, owner)
    history = lp.get_task(plan, 3).metadata[CLAIM_HISTORY]
    assert [h["by"] for h in history] == owners[-CLAIM_HISTORY_KEPT:]
    assert [h["owner"] for h in history] == (["w0", *owners])[-CLAIM_HISTORY_KEPT - 1 : -1]
    # The task's own metadata nearly at the bound: old entries go first, the take-over
    # still happens, and the metadata never exceeds MAX_METADATA_BYTES.
    lp.update_task(plan, 3, owner=owners[-1], metadata={"notes": "x" * (MAX_METADATA_BYTES - 900)})
    late = [f"late{i}-" + "o" * 150 for i in range(3)]  # long owners: long entries
    for i, owner in enumerate(late):
        clock.set(100_000 + i * 1000)
        claim(lp, plan, owner)
        task = lp.get_task(plan, 3)
        assert task.owner == owner
        assert metadata_size(task.metadata) <= MAX_METADATA_BYTES
        assert task.metadata[CLAIM_HISTORY][-1]["by"] == owner
    assert len(task.metadata[CLAIM_HISTORY]) < CLAIM_HISTORY_KEPT
    # With no room even for one entry, the take-over is not refused for its record.
    lp.update_task(plan, 3, owner=late[-1], metadata={"notes": "x" * (MAX_METADATA_BYTES - 60), CLAIM_HISTORY: None})
    clock.set(200_000)
    claim(lp, plan, "last")
    task = lp.get_task(plan, 3)
    assert task.owner == "last" and CLAIM_HISTORY not in task.metadata
    assert metadata_size(task.metadata) <= MAX_METADATA_BYTES


def test_leaving_in_progress_ends_the_lease(lp: Planner, store: PlanStore, plan: str, clock: Clock) -> None:
    claim(lp, plan, "alice")
    change = lp.update_task(plan, 3, status="completed")
    assert change.changed == ["status", "leaseSeconds", "leaseExpiresAt"]
    doc = stored_tasks(store, plan)[3]
    assert "leaseSeconds" not in doc and "leaseExpiresAt" not in doc
    # Reopened and claimed again without a lease: a claim as before, never claimable.
    lp.update_task(plan, 3, status="pending")
    claim(lp, plan, "bob", lease=None)
    clock.set(10 * MAX_LEASE_SECONDS)
    with pytest.raises(ClaimConflict):
        claim(lp, plan, "carol")
    # Released (owner dropped): the lease goes with it.
    lp.update_task(plan, 3, owner="bob", lease_seconds=30)
    assert lp.update_task(plan, 3, status="pending", owner="").changed == [
        "status",
        "owner",
        "leaseSeconds",
        "leaseExpiresAt",
    ]


@pytest.mark.parametrize("bad", [0, -1, MAX_LEASE_SECONDS + 1, True, 1.5, "60"])
def test_a_bad_lease_length_is_refused(lp: Planner, store: PlanStore, plan: str, bad: object) -> None:
    before = stored_state(store)
    with pytest.raises(InvalidInput, match="leaseSeconds must be a whole number from 1 to 86,400"):
        lp.update_task(plan, 3, status="in_progress", owner="alice", lease_seconds=bad)
    assert stored_state(store) == before


def test_a_lease_needs_a_claim(lp: Planner, store: PlanStore, plan: str) -> None:
    before = stored_state(store)
    with pytest.raises(InvalidInput, match="with owner"):
        lp.update_task(plan, 3, status="in_progress", lease_seconds=60)
    with pytest.raises(InvalidInput, match="would not be in progress"):
        lp.update_task(plan, 3, status="completed", owner="alice", lease_seconds=60)
    with pytest.raises(InvalidInput, match="would not be in progress"):
        lp.update_task(plan, 3, owner="alice", lease_seconds=60)  # still pending
    assert stored_state(store) == before


def test_a_lease_lasts_at_least_its_length(store: PlanStore, clock: Clock) -> None:
    """Stored in whole seconds like createdAt, an expiry is rounded up, never down."""
    lp = Planner(store, clock)
    plan = seed_plan(lp, in_progress=False)
    clock.now = T0 + dt.timedelta(milliseconds=300)
    claim(lp, plan, "alice", lease=1)
    assert lp.get_task(plan, 3).lease_expires_at == at(2)
    clock.now = T0 + dt.timedelta(milliseconds=1999)
    assert list_tasks(lp, plan).claimable == []
    clock.set(2)
    assert list_tasks(lp, plan).claimable == [3]


def test_a_one_second_lease_runs_out_on_the_real_clock(store: PlanStore) -> None:
    lp = Planner(store)  # the server's clock
    plan = seed_plan(lp, in_progress=False)
    claim(lp, plan, "alice", lease=1)
    with pytest.raises(ClaimConflict):  # a 1 s lease rounded up lasts more than 1 s
        claim(lp, plan, "bob")
    deadline = time.monotonic() + bound(5)
    while 3 not in ready(lp, plan):
        assert time.monotonic() < deadline, f"a 1 s lease was still running after {bound(5)} s"
        time.sleep(0.05)
    claim(lp, plan, "bob")
    task = lp.get_task(plan, 3)
    assert task.owner == "bob"
    assert [h["owner"] for h in task.metadata[CLAIM_HISTORY]] == ["alice"]
