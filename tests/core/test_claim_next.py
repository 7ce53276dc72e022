"""Claiming the next task in one call (TaskUpdate taskId "next"), on every store: it takes
the best ready task (highest priority, then the longest chain of unfinished work waiting
behind it, then the lowest id), answers like any claim, and TaskList status=ready lists
the tasks in that same order. "next" with anything but a claim is refused and changes
nothing; with nothing ready the refusal says whether to wait (for which owners' tasks,
until when) or stop. Agents claiming at the same instant get different tasks.

Priorities are set the way a task file holds them (a `priority` field)."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from planning_core import Planner, Session
from planning_core.actions import Actions
from planning_core.caller import NOBODY, Caller
from planning_core.errors import InvalidInput, NothingReady, PlanningError
from planning_core.events import EventHooks, parse_config
from planning_core.store import PlanStore
from planning_core.taskgraph.ranking import READY_ORDER
from tests.support.clock import T0, Clock
from tests.support.seed import list_tasks
from tests.support.stores import add_extra_fields, plan_held, reopened, stored_state, stored_tasks
from tests.support.waits import bound

# #2 blocks #3 which blocks #4 (a chain of two behind #2); #1 blocks #5 (one behind #1);
# #6 blocks nothing. Ready: #1, #2, #6.
GRAPH: list[list[int]] = [[], [], [2], [3], [1], []]


def make_plan(planner: Planner, blockers: list[list[int]] = GRAPH, name: str = "team") -> str:
    tasks = [{"subject": f"task {i}", "description": "d", "blockedBy": b} for i, b in enumerate(blockers, start=1)]
    return planner.create_plan("Team", name=name, date="2026-05-28", tasks=tasks).name


def claim_next(planner: Planner, plan: str, owner: str, **extra: Any) -> int:
    return planner.update_task(plan, "next", status="in_progress", owner=owner, **extra).task_id


def ready(planner: Planner, plan: str, **query: Any) -> list[int]:
    return [t.id for t in list_tasks(planner, plan, status="ready", **query).tasks]


@pytest.fixture
def planner(store: PlanStore, clock: Clock) -> Planner:
    return Planner(store, clock)


def test_the_longest_chain_of_work_behind_a_task_goes_first_then_the_lowest_id(planner: Planner) -> None:
    plan = make_plan(planner)
    assert ready(planner, plan) == [2, 1, 6]
    assert [claim_next(planner, plan, f"agent{n}") for n in range(3)] == [2, 1, 6]
    stored = stored_tasks(planner.store, plan)
    assert [(stored[i]["status"], stored[i]["owner"]) for i in (2, 1, 6)] == [
        ("in_progress", "agent0"),
        ("in_progress", "agent1"),
        ("in_progress", "agent2"),
    ]


def test_priority_comes_before_the_chain_and_no_priority_ranks_after_2(store: PlanStore, planner: Planner) -> None:
    plan = make_plan(planner)
    add_extra_fields(store, plan, 6, priority=1)  # blocks nothing, but urgent
    add_extra_fields(store, plan, 2, priority=3)  # the longest chain, but below "no priority"
    assert ready(planner, plan) == [6, 1, 2]
    assert [claim_next(planner, plan, f"agent{n}") for n in range(3)] == [6, 1, 2]


def test_priority_2_ranks_before_no_priority_and_0_before_all(store: PlanStore, planner: Planner) -> None:
    plan = make_plan(planner, [[], [], [], []])
    add_extra_fields(store, plan, 4, priority=2)
    add_extra_fields(store, plan, 3, priority=0)
    assert ready(planner, plan) == [3, 4, 1, 2]


def test_only_unfinished_work_behind_a_task_counts(planner: Planner) -> None:
    plan = make_plan(planner)
    # #3 done ahead of its blocker: #2's chain is now #4 alone, as long as #1's (#5); #4 is ready.
    planner.update_task(plan, 3, status="completed")
    assert ready(planner, plan) == [1, 2, 4, 6]
    assert claim_next(planner, plan, "agent") == 1


def test_the_claim_answers_like_any_claim(planner: Planner) -> None:
    plan = make_plan(planner)
    actions = Actions(planner)
    session = Caller(NOBODY, Session())
    outcome = actions.task_update(session, "next", plan, status="in_progress", owner="alice", lease_seconds=60)
    assert outcome.text.splitlines()[0] == "Updated task #2 status, owner, leaseSeconds, leaseExpiresAt"
    # ... and says which task it took, so the agent need not look it up before starting.
    subject = planner.get_task(plan, 2).subject
    assert outcome.text.splitlines()[1] == f"Claimed: #2 {subject} (TaskGet #2 for its description)"
    data = outcome.structured()
    assert (data["taskId"], data["status"], data["changed"]) == (
        2,
        "in_progress",
        ["status", "owner", "leaseSeconds", "leaseExpiresAt"],
    )
    task = planner.get_task(plan, 2)
    assert (task.owner, task.lease_seconds, task.lease_expires_at) == ("alice", 60, "2026-05-28T09:01:00Z")


def test_a_claim_whose_lease_ran_out_is_taken_by_the_next_claim(planner: Planner, clock: Clock) -> None:
    plan = make_plan(planner, [[], []])
    planner.update_task(plan, 1, status="in_progress", owner="gone", lease_seconds=30)
    assert claim_next(planner, plan, "b", lease_seconds=30) == 2
    with pytest.raises(NothingReady):
        claim_next(planner, plan, "c")
    clock.now = T0 + dt.timedelta(seconds=30)  # #1's (and #2's) lease ran out; #1 ranks first
    assert ready(planner, plan) == [1, 2]
    assert claim_next(planner, plan, "c", lease_seconds=30) == 1
    task = planner.get_task(plan, 1)
    assert (task.owner, task.metadata["claimHistory"][0]["owner"]) == ("c", "gone")


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"owner": "alice"}, "status is missing"),
        ({"status": "completed", "owner": "alice"}, "status is 'completed'"),
        ({"status": "pending", "owner": "alice"}, "status is 'pending'"),
        ({"status": "deleted", "owner": "alice"}, "status is 'deleted'"),
        ({"status": "in_progress"}, "owner is missing"),
        ({"status": "in_progress", "owner": ""}, "owner is missing"),
        ({"status": "in_progress", "owner": "a", "subject": "s"}, "it also asks to change subject"),
        ({"status": "in_progress", "owner": "a", "add_blocked_by": [1], "metadata": {}}, "addBlockedBy, metadata"),
    ],
)
def test_next_with_anything_but_a_claim_is_refused_and_changes_nothing(
    store: PlanStore, planner: Planner, changes: dict[str, Any], problem: str
) -> None:
    plan = make_plan(planner)
    before = stored_state(store)
    with pytest.raises(InvalidInput) as refused:
        planner.update_task(plan, "next", **changes)
    text = str(refused.value)
    assert text.startswith('taskId "next" claims the best ready task') and problem in text, text
    assert 'status="in_progress"' in text and "Nothing was changed" in text
    assert stored_state(store) == before


def test_next_with_completed_is_refused_as_such_where_completion_hooks_run(planner: Planner) -> None:
    plan = make_plan(planner)
    hooks = EventHooks(parse_config({"TaskCompleted": [{"command": "true"}]}))
    with pytest.raises(InvalidInput, match='taskId "next" claims'):
        Actions(planner, hooks).task_update(Caller(NOBODY, Session()), "next", plan, status="completed", owner="a")


@pytest.mark.parametrize(
    ("blocked_by", "updates", "message"),
    [
        pytest.param(
            [[], [1]],
            [(1, {"status": "completed"}), (2, {"status": "completed"})],
            "No task to claim in plan {plan}: all 2 tasks are completed. Stop: nothing is left to claim "
            "(verify the result against plan.md, then PlanArchive). Nothing was changed.",
            id="every-task-done-says-stop",
        ),
        pytest.param(
            [[], [], [1, 2], [3]],
            [
                (1, {"status": "in_progress", "owner": "alice", "lease_seconds": 90}),
                (2, {"status": "in_progress", "owner": "bob"}),
            ],
            "No task to claim in plan {plan}: 2 tasks wait for the 2 in progress: "
            "#1 (alice, lease runs out at 2026-05-28T09:01:30Z, in 90 s), #2 (bob, no lease). "
            "Wait, and call again when one of these completes, or at 2026-05-28T09:01:30Z when the first "
            "lease runs out. Nothing was changed.",
            id="names-the-tasks-in-progress-their-owners-and-when-leases-run-out",
        ),
    ],
)
def test_nothing_ready_says_why_and_what_to_do_next(
    store: PlanStore,
    planner: Planner,
    blocked_by: list[list[int]],
    updates: list[tuple[int, dict[str, Any]]],
    message: str,
) -> None:
    plan = make_plan(planner, blocked_by)
    for task, fields in updates:
        planner.update_task(plan, task, **fields)
    before = stored_state(store)
    with pytest.raises(NothingReady) as refused:
        claim_next(planner, plan, "carol")
    assert str(refused.value) == message.format(plan=plan)
    assert stored_state(store) == before


def test_nothing_ready_with_only_claimed_work_left_says_stop_unless_a_lease_runs_out(planner: Planner) -> None:
    plan = make_plan(planner, [[]])
    planner.update_task(plan, 1, status="in_progress", owner="alice", lease_seconds=60)
    with pytest.raises(NothingReady) as refused:
        claim_next(planner, plan, "bob")
    assert "the 1 task left is in progress: #1 (alice, lease runs out at 2026-05-28T09:01:00Z, in 60 s)" in str(
        refused.value
    )
    assert "Nothing is waiting to start: stop, or call again at 2026-05-28T09:01:00Z" in str(refused.value)


def test_nothing_ready_in_a_plan_without_tasks(planner: Planner) -> None:
    plan = make_plan(planner, [])
    with pytest.raises(NothingReady, match="it has no tasks"):
        claim_next(planner, plan, "alice")


def test_a_claim_with_nothing_ready_is_refused_without_waiting_for_the_plans_lock(
    store: PlanStore, planner: Planner
) -> None:
    """Agents woken by a change that readied nothing (a waiting claim tries again on every
    change) never queue for the plan's lock to learn it: with another writer holding the
    plan, the refusal comes at once, while the lock is still held."""
    plan = make_plan(planner, [[], [1]])
    planner.update_task(plan, 1, status="in_progress", owner="alice")
    with reopened(store) as other, plan_held(other, plan) as holder:
        with pytest.raises(NothingReady) as refused:
            claim_next(planner, plan, "bob")  # taking the lock would wait, then say the plan is busy
        assert refused.value.work_left
        assert holder.is_alive()


def test_ready_is_listed_best_first_across_pages_and_says_so(store: PlanStore, planner: Planner) -> None:
    plan = make_plan(planner, [[], [], [], [], [2], [5], [4]])
    add_extra_fields(store, plan, 3, priority=4)
    order = [2, 4, 1, 3]  # #2 has two behind it, #4 one; #1 none; #3 has priority 4
    first = list_tasks(planner, plan, status="ready", limit=2)
    assert [t.id for t in first.tasks] == order[:2] and first.next_cursor == "4"
    rest = list_tasks(planner, plan, status="ready", limit=2, cursor=first.next_cursor)
    assert [t.id for t in rest.tasks] == order[2:] and rest.next_cursor is None
    text = Actions(planner).task_list(Caller(NOBODY, Session()), plan, status="ready").text
    assert text.splitlines()[1] == f"(ready, {READY_ORDER})"
    assert [line.split()[0] for line in text.splitlines()[2:]] == [f"#{i}" for i in order]


AGENTS = 32
STORES = 4  # the agents share this many store objects, as if behind four servers


@pytest.fixture
def stores(store: PlanStore) -> Iterator[list[PlanStore]]:
    with ExitStack() as stack:
        yield [store] + [stack.enter_context(reopened(store)) for _ in range(STORES - 1)]


def test_32_agents_claiming_at_once_get_32_different_tasks(stores: list[PlanStore]) -> None:
    """Each agent's one call starts at the same moment (a barrier): every claim is chosen
    under the plan's lock, from what the claims before it wrote."""
    plan = make_plan(Planner(stores[0]), [[] for _ in range(AGENTS)], name="race")
    planners = [Planner(s) for s in stores]
    start = threading.Barrier(AGENTS)
    got: dict[str, int | PlanningError] = {}

    def agent(n: int) -> None:
        start.wait(timeout=bound(30))
        try:
            got[f"agent{n}"] = claim_next(planners[n % STORES], plan, f"agent{n}", lease_seconds=600)
        except PlanningError as e:
            got[f"agent{n}"] = e

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(AGENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=bound(60))
    assert all(isinstance(v, int) for v in got.values()) and len(got) == AGENTS, got
    assert sorted(got.values()) == list(range(1, AGENTS + 1))  # type: ignore[type-var]
    stored = stored_tasks(stores[0], plan)
    assert {f"agent{n}": next(i for i, t in stored.items() if t["owner"] == f"agent{n}") for n in range(AGENTS)} == got
    assert all(t["status"] == "in_progress" for t in stored.values())


def test_the_ready_order_holds_exactly_the_ready_tasks(planner: Planner, clock: Clock) -> None:
    """The order lists what graph.is_ready calls ready, no more, no less: pending with every
    blocker completed, or a claim whose lease ran out; not one blocked, running or done."""
    from planning_core.taskgraph import graph

    plan = make_plan(planner, [[], [], [1], [2], [], [5], []])
    planner.update_task(plan, 1, status="completed")  # #3 becomes ready
    planner.update_task(plan, 2, status="in_progress", owner="a", lease_seconds=10)  # #4 waits on it
    planner.update_task(plan, 5, status="in_progress", owner="b")  # no lease: never ready again
    planner.update_task(plan, 7, status="in_progress", owner="c", lease_seconds=5)
    for seconds in (0, 5, 10):
        clock.now = T0 + dt.timedelta(seconds=seconds)
        expected = graph.ready_ids(planner.store.snapshot(plan), clock.now)
        assert sorted(ready(planner, plan)) == expected, seconds
    assert ready(planner, plan) == [2, 3, 7]  # #2 has #4 behind it
