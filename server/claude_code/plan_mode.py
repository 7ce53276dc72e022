"""Claude Code's plan mode: a plan a person approved (its ExitPlanMode call) becomes a
Session Plan, plan.md the approved text and its steps the tasks; approved again in the
same session, that plan is revised, never copied.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from planning_core.store import PlanStore

from .hook_common import actions_on, as_dict, hook_caller, output, session_state

if TYPE_CHECKING:
    from pathlib import Path

    from planning_core.actions import Actions


def approved_plan(payload: dict[str, Any]) -> tuple[str, str] | None:
    """(plan text, plan file) of an approved ExitPlanMode call: `tool_input` holds
    `plan` and `planFilePath`; `tool_response` `plan` and `filePath` (the one to trust
    when the person edited the plan in the dialog: `planWasEdited`)."""
    args = as_dict(payload.get("tool_input"))
    answer = as_dict(payload.get("tool_response"))
    text = answer.get("plan") if isinstance(answer.get("plan"), str) else args.get("plan")
    where = answer.get("filePath") or args.get("planFilePath") or ""
    if not isinstance(text, str) or not text.strip():
        return None
    return text, str(where)


def exit_plan_mode(store: PlanStore, root: Path | None, session_id: str, payload: dict[str, Any]) -> str:
    """Claude Code's plan mode approved: the plan becomes a Session Plan (plan.md the
    approved text, its steps the tasks); approved again in this session, that plan is
    revised, never copied."""
    approved = approved_plan(payload)
    if approved is None:
        return ""
    from planning_core.actions import CREATED_PLAN
    from planning_core.rendering.plan_text import read_plan

    text, where = approved
    actions, caller = actions_on(store), hook_caller()
    with session_state(store, root, session_id) as state:
        made = as_dict(state.get("plan_mode_plans"))
        earlier = made.get(where)
        if isinstance(earlier, str) and earlier in actions.active_plans():
            name, said = earlier, actions.plan_revise(caller, earlier, read_plan(text))
        else:
            name = actions.plan_from_text(caller, text)
            said = f"{CREATED_PLAN}{name} from the approved plan; it is now the current plan."
        made.pop(where, None)
        made[where] = name  # the newest last: what a state too big to keep loses first is the oldest
        state.update(plan_mode_plans=made, current_plan=name, plan_quiet=0, updated=time.time())
    board = _board(actions, name)
    return output("PostToolUse", f"{said}\n{board}\nStart: TaskUpdate the first ready task to in_progress.")


def _board(actions: Actions, name: str) -> str:
    from planning_core.rendering.render import task_board

    snap = actions.snapshot(name)
    tasks = list(snap.tasks.values())
    return task_board(snap.summary(), tasks, {t.id: t.blocked_by for t in tasks})
