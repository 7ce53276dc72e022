"""The exact texts of the tools' answers, the resources and the Active Plans block."""

from __future__ import annotations

from planning_core import Planner
from planning_core.rendering.render import (
    active_plans_block,
    created_text,
    startup_summary,
    task_board,
    task_line,
    updated_text,
)
from planning_core.store import PlanStore
from tests.support.seed import list_tasks, seed_plan

CONTRACT_SUMMARY = """\
[Session Plan] Active tasks:
  ▸ 2026-05-28-add-auth [2/4 done]
    [x] #1: Design auth schema
    [x] #2: Implement JWT middleware
    [>] #3: Add login endpoint
    [ ] #4: Add logout endpoint"""


def test_active_plans_block_none(planner: Planner) -> None:
    assert active_plans_block(planner.summaries()) == "# Active Plans\n(none)"


def test_active_plans_block_exact(planner: Planner) -> None:
    name = seed_plan(planner)
    assert active_plans_block(planner.summaries()) == (
        '# Active Plans\n- 2026-05-28-add-auth [2/4 done] current: "Add login endpoint"'
    )
    planner.create_plan("Later plan", date="2026-06-01")
    planner.update_task(name, 3, status="pending")
    assert active_plans_block(planner.summaries()) == (
        "# Active Plans\n- 2026-05-28-add-auth [2/4 done]\n- 2026-06-01-later-plan [0/0 done]"
    )
    planner.archive("2026-06-01-later-plan")
    assert active_plans_block(planner.summaries(include_done=True)) == (
        "# Active Plans\n- 2026-05-28-add-auth [2/4 done]"
    )


def test_startup_summary_exact(planner: Planner, store: PlanStore) -> None:
    name = seed_plan(planner)
    assert startup_summary([store.snapshot(name)]) == CONTRACT_SUMMARY


def test_task_lines_exact(planner: Planner) -> None:
    name = seed_plan(planner)
    page = list_tasks(planner, name)
    lines = [task_line(t, page.open_blockers.get(t.id, ())) for t in page.tasks]
    assert lines == [
        "#1 [completed] Design auth schema",
        "#2 [completed] Implement JWT middleware",
        "#3 [in_progress] Add login endpoint (alice)",
        "#4 [pending] Add logout endpoint [blocked by #3]",  # #2 is done: only open blockers
    ]
    planner.update_task(name, 2, status="pending", owner="bob")
    page = list_tasks(planner, name)
    assert task_board(page.plan, page.tasks, page.open_blockers, page.unreadable) == "\n".join(
        [
            "2026-05-28-add-auth [1/4 done]",
            "#1 [completed] Design auth schema",
            "#2 [pending] Implement JWT middleware (bob)",
            "#3 [in_progress] Add login endpoint (alice)",
            "#4 [pending] Add logout endpoint [blocked by #2, #3]",
        ]
    )
    page = list_tasks(planner, name, limit=2)
    board = task_board(page.plan, page.tasks, page.open_blockers, page.unreadable, page.next_cursor)
    assert board.splitlines()[-1] == 'More tasks: call TaskList with cursor="2" for the next page.'


def test_created_and_updated_texts(planner: Planner) -> None:
    name = seed_plan(planner)
    t = planner.create_task(name, "Add password reset", "mail a link")
    assert created_text(t) == "Task #5 created successfully: Add password reset"
    c = planner.update_task(name, 5, status="in_progress", owner="zoe", add_blocked_by=[1])
    assert updated_text(c.task_id, c.changed) == "Updated task #5 status, owner, blockedBy"
    c = planner.update_task(name, 3, status="completed")
    assert updated_text(c.task_id, c.changed, c.unblocked, c.all_done) == (
        "Updated task #3 status\nNow unblocked: #4 Add logout endpoint"
    )
