"""A claim that fits the agent, on every store: TaskUpdate taskId "next" with `label` takes
the best ready task carrying that label, with `parent` the best ready part of that task
(chosen as TaskList's label and parent filters choose, in the ranking's order); the
parent is a choice, never set on the task. With none of those ready, the refusal says
what is left of them and which labels the ready tasks carry, or, with nothing ready at
all, the plan's own reason to wait or stop."""

from __future__ import annotations

from typing import Any

import pytest

from planning_core import Planner
from planning_core.errors import InvalidInput, NothingReady
from planning_core.store import PlanStore
from tests.support.seed import list_tasks
from tests.support.stores import stored_state

# #1 epic; #2 ui part of #1; #3 backend part of #1 (priority 0); #4 ui, blocked by #2, no
# parent; #5 backend and ui (priority 1), blocks #6; #6 no label, blocked by #5.
TASKS: list[dict[str, Any]] = [
    {"subject": "epic"},
    {"subject": "form", "labels": ["ui"], "parent": 1},
    {"subject": "api", "labels": ["backend"], "parent": 1, "priority": 0},
    {"subject": "page", "labels": ["ui"], "blockedBy": [2]},
    {"subject": "db", "labels": ["backend", "ui"], "priority": 1},
    {"subject": "docs", "blockedBy": [5]},
]


@pytest.fixture
def plan(planner: Planner) -> str:
    return planner.create_plan("Team", name="team", date="2026-05-28", tasks=TASKS).name


def claim(planner: Planner, plan: str, owner: str, **pick: Any) -> int:
    return planner.update_task(plan, "next", status="in_progress", owner=owner, **pick).task_id


def test_a_label_takes_the_best_ready_task_carrying_it(planner: Planner, plan: str) -> None:
    # ui: #5 (priority 1) before #2; #4 waits for #2.
    assert [t.id for t in list_tasks(planner, plan, status="ready", label="ui").tasks] == [5, 2]
    assert claim(planner, plan, "u1", label="ui") == 5
    assert claim(planner, plan, "u2", label="ui") == 2
    task = planner.get_task(plan, 2)
    assert (task.status.value, task.owner, task.labels) == ("in_progress", "u2", ["ui"])
    assert claim(planner, plan, "any") == 3  # no label: the best of all (priority 0)


def test_a_parent_takes_the_best_ready_part_of_it_and_sets_nothing(planner: Planner, plan: str) -> None:
    assert claim(planner, plan, "p1", parent=1) == 3  # priority 0 first
    assert claim(planner, plan, "p2", parent="#1", label="ui") == 2
    assert planner.get_task(plan, 3).parent == 1 and planner.get_task(plan, 2).parent == 1
    with pytest.raises(NothingReady) as refused:
        claim(planner, plan, "p3", parent=1)
    text = str(refused.value)
    assert "none of the 2 unfinished tasks part of #1 can start now. 2 other tasks are ready" in text, text
    assert "(backend 1, no label 1, ui 1)" in text, text  # #5 and the epic itself


def test_nothing_ready_for_a_label_names_the_labels_of_the_ready_tasks(
    store: PlanStore, planner: Planner, plan: str
) -> None:
    claim(planner, plan, "a", label="ui")  # #5
    claim(planner, plan, "b", label="ui")  # #2; #4 waits for it
    before = stored_state(store)
    with pytest.raises(NothingReady) as refused:
        claim(planner, plan, "c", label="ui")
    text = str(refused.value)
    assert text.startswith("No task to claim in plan 2026-05-28-team: none of the 3 unfinished tasks labelled 'ui'")
    assert "2 other tasks are ready (backend 1, no label 1): claim one with its label or with no label" in text
    assert stored_state(store) == before
    with pytest.raises(NothingReady, match=r"no task is labelled 'qa'\. 2 other tasks are ready"):
        claim(planner, plan, "c", label="qa")


def test_nothing_ready_anywhere_gives_the_plans_reason_after_the_labels(planner: Planner, plan: str) -> None:
    for owner in ("a", "b", "c"):
        claim(planner, plan, owner)
    claim(planner, plan, "d")  # #1, the epic (nothing blocks it)
    with pytest.raises(NothingReady) as refused:
        claim(planner, plan, "e", label="ui")
    text = str(refused.value)
    assert "Nor can any other: 2 tasks wait for the 4 in progress" in text and "Wait, and call again" in text, text
    for t in (2, 3, 5, 4, 6, 1):  # parts before their parent, blockers before what they block
        planner.update_task(plan, t, status="completed")
    with pytest.raises(NothingReady, match=r"all 3 tasks labelled 'ui' are completed\. Nor can any other: all 6"):
        claim(planner, plan, "e", label="ui")


def test_a_label_is_refused_where_it_is_no_claim_or_not_a_label(store: PlanStore, planner: Planner, plan: str) -> None:
    before = stored_state(store)
    with pytest.raises(InvalidInput, match='label chooses the task a claim of taskId "next" takes'):
        planner.update_task(plan, 2, status="in_progress", owner="a", label="ui")
    with pytest.raises(InvalidInput, match="is not a label"):
        claim(planner, plan, "a", label="two words")
    with pytest.raises(InvalidInput):
        claim(planner, plan, "a", parent="x")
    assert stored_state(store) == before
