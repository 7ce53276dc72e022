"""One definition per rule, used by every path that applies it: "blocked" is the same
in TaskList and `watch`; the reminder the server and the Claude Code hook add comes
from one function, so the rounds it is due on agree."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from planning_core import PLAN_REMINDER, Planner, Session
from planning_core.actions import Actions, created_plan_name
from planning_core.caller import NOBODY, Caller
from planning_core.store import PlanStore
from planning_core.stores.files import FileStore
from server.claude_code import claude_hook
from server.commands import watch
from tests.support.seed import list_tasks, seed_plan


def _watch_text(store: PlanStore, plan: str) -> str:
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(watch.plan_panel(store.snapshot(plan)))
    return out.getvalue()


def test_a_task_in_progress_whose_blocker_reopened_is_blocked_everywhere(planner: Planner, store: PlanStore) -> None:
    plan = seed_plan(planner)  # #1, #2 done; #3 (blocked by #1) in progress under alice
    planner.update_task(plan, 1, status="pending")  # the blocker is reopened under it
    listed = [t.id for t in list_tasks(planner, plan, status="blocked").tasks]
    assert listed == [3, 4]  # #3 waits on #1 again (#2 is done); #4 still waits on #3
    assert "ready 1 · blocked 2" in _watch_text(store, plan)  # it said "blocked 1": pending minus ready


def test_watch_and_tasklist_agree_on_the_seed(planner: Planner, store: PlanStore) -> None:
    plan = seed_plan(planner)
    blocked = list_tasks(planner, plan, status="blocked").tasks
    ready = list_tasks(planner, plan, status="ready").tasks
    assert f"ready {len(ready)} · blocked {len(blocked)}" in _watch_text(store, plan)


def _hook(store: PlanStore, tool: str, response: object = None) -> str:
    payload = {"session_id": "s1", "tool_name": tool, "tool_response": response or []}
    # The hook keeps its clock in files under the root (files), else in the store's sessions.
    root = store.root if isinstance(store, FileStore) else None
    printed = claude_hook.post_tool_use(store, root, payload)
    return str(json.loads(printed)["hookSpecificOutput"]["additionalContext"]) if printed else ""


def test_server_and_hook_remind_on_the_same_rounds(planner: Planner, store: PlanStore) -> None:
    seed_plan(planner)  # a task in progress: the plan reminder is due every 5th quiet round
    calls = ["TaskUpdate", *["TaskList"] * 7, "TaskCreate", *["TaskGet"] * 6]
    refused = {3}  # a refused call is a quiet round, never a change
    session = Session()
    server = [
        session.round(tool, succeeded=i not in refused, plan_has_work=lambda: True) for i, tool in enumerate(calls)
    ]
    hook = [
        _hook(store, f"mcp__plans__{tool}", {"isError": True} if i in refused else None) for i, tool in enumerate(calls)
    ]
    assert [bool(due) for due in server] == [bool(text) for text in hook]
    assert [i for i, text in enumerate(hook) if text] == [5, 13]
    assert {text for text in hook if text} == {PLAN_REMINDER}
    assert _hook(store, "TaskUpdate") == ""  # Claude Code's own tool of that name is no change of ours


def test_the_hook_reads_the_plan_name_from_plancreate_as_the_server_says_it(planner: Planner, tmp_path: Path) -> None:
    outcome = Actions(planner).plan_create(
        Caller(NOBODY, Session()), "Überarbeitung der Straße", analysis="a", approach="b", date="2026-05-29"
    )
    assert created_plan_name(outcome.text) == "2026-05-29-uberarbeitung-der-strasse"
    again = Actions(planner).plan_create(
        Caller(NOBODY, Session()), "Überarbeitung der Straße", analysis="a", approach="b", date="2026-05-29"
    )
    assert created_plan_name(again.text) == again.data.plan.name != outcome.data.plan.name
    assert created_plan_name("Created plan ../etc (1 tasks)") is None
    assert created_plan_name("no plan here") is None
