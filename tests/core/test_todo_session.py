"""The todo list (Memory Plan) and the reminder clock."""

from __future__ import annotations

import pytest

from planning_core import PLAN_REMINDER, TODO_REMINDER, Session, TodoInvalid, TodoList


def _items(*statuses: str) -> list[dict[str, str]]:
    return [{"content": f"item {i}", "status": s} for i, s in enumerate(statuses, start=1)]


def test_todo_render_marks() -> None:
    todo = TodoList()
    assert todo.render() == "Todo list is empty."
    todo.replace(_items("completed", "in_progress", "pending"))
    assert todo.render() == "Todo [1/3 done]\n[x] item 1\n[>] item 2\n[ ] item 3"
    todo.replace(_items("pending"), topic="auth")
    assert todo.render() == "Todo (auth) [0/1 done]\n[ ] item 1"


@pytest.mark.parametrize(
    "bad",
    [
        _items(*["pending"] * 13),
        _items("in_progress", "in_progress"),
        [*_items("pending"), {"content": "", "status": "pending"}],
        [*_items("pending"), {"content": "x", "status": "done"}],
        [*_items("pending"), {"content": "x" * 201}],
        [*_items("pending"), {"content": "x", "extra": 1}],
    ],
)
def test_refused_replace_keeps_old_list(bad: list[dict[str, object]]) -> None:
    todo = TodoList()
    todo.replace(_items("completed", "in_progress"), topic="keep")
    before = todo.render()
    with pytest.raises(TodoInvalid):
        todo.replace(bad, topic="new")
    assert todo.render() == before


def test_twelve_items_and_one_in_progress_are_fine() -> None:
    todo = TodoList()
    todo.replace(_items("in_progress", *["pending"] * 11))
    assert len(todo.items) == 12 and todo.unfinished
    todo.replace(_items("completed", "completed"))
    assert not todo.unfinished
    assert todo.clear() and not todo.clear()


def _run(session: Session, tool: str, *, ok: bool = True, work: bool = True) -> list[str]:
    return session.round(tool, succeeded=ok, plan_has_work=lambda: work)


def test_plan_reminder_on_5th_and_10th_quiet_round() -> None:
    s = Session()
    assert _run(s, "TaskUpdate") == []  # round 0
    due = [n for n in range(1, 16) if _run(s, "TaskList") == [PLAN_REMINDER]]
    assert due == [5, 10, 15]


def test_no_plan_reminder_without_work() -> None:
    s = Session()
    asked = []

    def has_work() -> bool:
        asked.append(1)
        return False

    assert all(s.round("TaskGet", succeeded=True, plan_has_work=has_work) == [] for _ in range(12))
    assert len(asked) == 2  # only asked on the due rounds (5, 10)


def test_plan_changing_call_resets_and_refused_call_does_not() -> None:
    s = Session()
    for _ in range(4):
        assert _run(s, "TaskList") == []
    assert _run(s, "TaskCreate") == []  # reset: round 0
    for _ in range(4):
        assert _run(s, "TaskGet") == []
    assert _run(s, "TaskUpdate", ok=False) == [PLAN_REMINDER]  # refused: a round, no reset
    for _ in range(4):
        assert _run(s, "PlanList") == []
    assert _run(s, "TaskList") == [PLAN_REMINDER]
    for tool in ("PlanCreate", "PlanArchive", "TaskUpdate"):
        for _ in range(3):
            _run(s, "TaskList")
        assert _run(s, tool) == []
        assert s.clock.plan_quiet == 0


def test_todo_reminder_every_3rd_quiet_round_while_unfinished() -> None:
    s = Session()
    s.todo.replace(_items("in_progress", "pending"))
    assert _run(s, "todo", work=False) == []
    due = [n for n in range(1, 10) if TODO_REMINDER in _run(s, "TaskList", work=False)]
    assert due == [3, 6, 9]
    s.todo.replace(_items("completed", "completed"))
    assert _run(s, "todo", work=False) == []
    assert not any(_run(s, "TaskList", work=False) for _ in range(7))


def test_refused_todo_call_counts_but_does_not_reset() -> None:
    s = Session()
    s.todo.replace(_items("pending"))
    _run(s, "todo", work=False)
    _run(s, "TaskList", work=False)
    _run(s, "TaskList", work=False)
    assert _run(s, "todo", ok=False, work=False) == [TODO_REMINDER]


def test_both_reminders_plan_first() -> None:
    s = Session()
    s.todo.replace(_items("pending"))
    _run(s, "TaskUpdate")  # plan round 0
    _run(s, "todo")  # todo round 0, plan quiet round 1
    results = [_run(s, "TaskList") for _ in range(9)]  # plan quiet 10, todo quiet 9
    assert results[-1] == [PLAN_REMINDER, TODO_REMINDER]
