"""Priorities, labels and a parent on every store: set, shown, filtered, cleared; absent ones
absent from the task's file; a parent that exists, is not the task itself and is none of its
parts; a parent completed only once all its parts are, and deleted only when it has none."""

from __future__ import annotations

from typing import Any

import pytest

from planning_core import InvalidInput, Planner, PlanningError, TaskNotFound
from planning_core.errors import ParentRefused, UnfinishedParts
from planning_core.rendering.render import task_detail, task_line
from planning_core.store import PlanStore
from tests.support.seed import list_tasks
from tests.support.stores import stored_state, stored_tasks

NEW_FIELDS = ("priority", "labels", "parent")


def _plan(planner: Planner) -> str:
    tasks = [
        {"subject": "Epic: login"},
        {"subject": "Middleware", "parent": 1, "priority": 1, "labels": ["api", "auth"]},
        {"subject": "Endpoint", "parent": 1, "blockedBy": [2], "priority": 0},
        {"subject": "Docs", "labels": ["docs"]},
    ]
    return planner.create_plan("Login", analysis="a", approach="b", tasks=tasks).name


def test_plancreates_tasks_take_them_and_absent_ones_stay_out_of_the_file(planner: Planner, store: PlanStore) -> None:
    plan = _plan(planner)
    stored = stored_tasks(store, plan)
    assert {k: stored[2][k] for k in NEW_FIELDS} == {"priority": 1, "labels": ["api", "auth"], "parent": 1}
    assert stored[3]["priority"] == 0 and "labels" not in stored[3]
    assert not set(NEW_FIELDS) & set(stored[1])  # an epic with none of them: as files always were
    assert [k for k in stored[4] if k in NEW_FIELDS] == ["labels"]


def test_lines_and_taskget_show_them_compactly(planner: Planner) -> None:
    plan = _plan(planner)
    snap = planner.store.snapshot(plan)
    assert task_line(snap.tasks[2]) == "#2 [pending] Middleware P1 {api,auth} ^#1"
    assert task_line(snap.tasks[3], [2]) == "#3 [pending] Endpoint P0 ^#1 [blocked by #2]"
    assert task_line(snap.tasks[1]) == "#1 [pending] Epic: login"
    detail = task_detail(snap.tasks[2], [])
    assert "Priority: P1\nLabels: api, auth\nParent: #1\n" in detail


def test_tasklist_filters_by_label_and_parent(planner: Planner) -> None:
    plan = _plan(planner)
    assert [t.id for t in list_tasks(planner, plan, label="api").tasks] == [2]
    assert [t.id for t in list_tasks(planner, plan, parent=1).tasks] == [2, 3]
    assert [t.id for t in list_tasks(planner, plan, parent="#1", status="ready").tasks] == [2]
    assert list_tasks(planner, plan, label="nope").tasks == []


def test_taskupdate_sets_and_clears_each_and_the_file_loses_the_key(planner: Planner, store: PlanStore) -> None:
    plan = _plan(planner)
    change = planner.update_task(plan, 4, priority=3, labels=["docs", "ui", "docs"], parent=1)
    assert change.changed == ["priority", "labels", "parent"]
    assert planner.get_task(plan, 4).labels == ["docs", "ui"]  # each once, in the order given
    change = planner.update_task(plan, 4, priority=-1, labels=[], parent=0)
    assert change.changed == ["priority", "labels", "parent"]
    assert not set(NEW_FIELDS) & set(stored_tasks(store, plan)[4])
    assert planner.update_task(plan, 4, priority=-1).changed == []  # clearing nothing changes nothing


@pytest.mark.parametrize(
    "change",
    [
        {"priority": 5},
        {"priority": True},
        {"labels": ["two words"]},
        {"labels": ["a,b"]},
        {"labels": ["x" * 33]},
        {"labels": [f"l{i}" for i in range(11)]},
        {"labels": "ui"},
        {"parent": "one"},
    ],
)
def test_bad_values_are_refused_and_change_nothing(
    planner: Planner, store: PlanStore, change: dict[str, object]
) -> None:
    plan = _plan(planner)
    before = stored_state(store)
    with pytest.raises(InvalidInput):
        planner.update_task(plan, 4, **change)
    with pytest.raises(InvalidInput):
        planner.create_task(plan, "New", **change)
    assert stored_state(store) == before


def test_a_parent_exists_is_not_the_task_and_is_none_of_its_parts(planner: Planner, store: PlanStore) -> None:
    plan = _plan(planner)
    planner.update_task(plan, 4, parent=2)  # 1 <- 2 <- 4
    before = stored_state(store)
    with pytest.raises(TaskNotFound, match="#9"):
        planner.update_task(plan, 4, parent=9)
    with pytest.raises(ParentRefused, match="its own parent"):
        planner.update_task(plan, 4, parent=4)
    with pytest.raises(ParentRefused, match="#4 is a part of task #1"):
        planner.update_task(plan, 1, parent=4)
    with pytest.raises(TaskNotFound):
        planner.create_task(plan, "Orphan", parent=99)
    assert stored_state(store) == before
    assert planner.create_task(plan, "Part of 4", parent=4).parent == 4


@pytest.mark.parametrize(
    ("status", "refused", "still_refused", "first", "last"),
    [
        (
            "completed",
            r"its parts #2, #3 are not completed",
            r"its parts #3 are not completed",
            (2, {"status": "completed"}),
            (3, {"status": "completed"}),
        ),
        ("deleted", r"parent of #2, #3", r"parent of #3", (2, {"parent": 0}), (3, {"status": "deleted"})),
    ],
)
def test_a_parent_completes_or_is_deleted_only_once_its_parts_have(
    planner: Planner,
    store: PlanStore,
    status: str,
    refused: str,
    still_refused: str,
    first: tuple[int, dict[str, Any]],
    last: tuple[int, dict[str, Any]],
) -> None:
    """Completed parts let the parent complete; a parent is deleted only once it has no
    parts (each taken out of it or deleted)."""
    plan = _plan(planner)
    before = stored_state(store)
    with pytest.raises(UnfinishedParts, match=refused):
        planner.update_task(plan, 1, status=status)
    assert stored_state(store) == before
    planner.update_task(plan, first[0], **first[1])
    with pytest.raises(UnfinishedParts, match=still_refused):
        planner.update_task(plan, 1, status=status)
    planner.update_task(plan, last[0], **last[1])
    done = planner.update_task(plan, 1, status=status)
    assert done.deleted if status == "deleted" else done.changed == ["status"]


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        ([{"subject": "a", "parent": 1}], "names itself as its parent"),
        ([{"subject": "a", "parent": 2}], "position 2; positions are 1..1"),
        ([{"subject": "a", "parent": 2}, {"subject": "b", "parent": 1}], "parent positions form a cycle"),
        ([{"subject": "a", "priority": 7}], "tasks\\[1\\] is invalid \\(priority"),
        (
            [{"subject": "a", "labels": ["no spaces"]}],
            "tasks\\[1\\] is invalid \\(labels: .*'no spaces' is not a label",
        ),
    ],
)
def test_plancreate_refuses_bad_positions_and_values(
    planner: Planner, store: PlanStore, tasks: list[dict[str, object]], message: str
) -> None:
    before = stored_state(store)
    with pytest.raises(PlanningError, match=message):
        planner.create_plan("Bad", analysis="a", approach="b", tasks=tasks)
    assert stored_state(store) == before


def test_the_board_graph_and_board_json_show_them(planner: Planner, store: PlanStore) -> None:
    from planning_core.actions import Actions
    from planning_core.rendering.mermaid import plan_graph
    from server.board.data import board_data, plan_data
    from server.commands.views import board_text

    plan = _plan(planner)
    snap = store.snapshot(plan)
    assert "#2 [pending] Middleware P1 {api,auth} ^#1\n" in board_text(Actions(planner), [snap]) + "\n"
    assert '["#2 Middleware P1 {api,auth} ^#1"]' in plan_graph(snap)
    rows = {row["id"]: row for row in plan_data(snap, detail=True)["tasks"]}
    assert {k: rows[2][k] for k in NEW_FIELDS} == {"priority": 1, "labels": ["api", "auth"], "parent": 1}
    assert {k: rows[1][k] for k in NEW_FIELDS} == {"priority": None, "labels": [], "parent": None}
    web = {row["id"]: row for row in board_data(Actions(planner), plan)["plan"]["tasks"]}
    assert web[3]["priority"] == 0 and web[3]["parent"] == 1
