"""The Stop hook: while the session's current plan has work this session can do (a task
it holds in progress, or a ready task no one holds), the stop is blocked with the task and
the next step (planning_core.done), at most STOP_BLOCKS_ENV (default 3; 0: never) times in
a row without a task completed; work held by other agents or waiting for a gate lets the
stop happen, saying so.

A stop on a planning folder is judged from the plans read without the models (the hook
runs at every stop); the store is opened only when a document needs them (StoreNeeded).
The session's own tasks are those its claims named: each round keeps the owners a
TaskUpdate or TaskCreate of ours named (note_work).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from planning_core.errors import PlanningError
from planning_core.store import PlanStore
from planning_core.stores import plain_active_plans, plain_plan, plain_plan_line

from .hook_common import actions_on, as_count, hook_caller, hook_choice, our_tool, refused, session_state

if TYPE_CHECKING:
    from planning_core.done import WorkLeft
    from planning_core.models import PlanSnapshot

STOP_BLOCKS_ENV = "PLANNING_MCP_STOP_BLOCKS"  # stops blocked in a row at most; 0 turns the Stop hook off
DEFAULT_STOP_BLOCKS = 3
MAX_OWNERS = 8  # owner names a session's claims used, kept to know its own tasks


def stop_blocks() -> int:
    """How many stops in a row the Stop hook may block (STOP_BLOCKS_ENV; 0: none)."""
    value = os.environ.get(STOP_BLOCKS_ENV, "").strip()
    return int(value) if value.isdigit() else DEFAULT_STOP_BLOCKS


def stop_judged(payload: dict[str, Any]) -> bool:
    """Does the Stop hook judge this stop at all (it is on, and the stop names its session)?
    Asked before the store is opened: a stop it lets through unjudged loads nothing."""
    session_id = payload.get("session_id")
    return bool(stop_blocks()) and isinstance(session_id, str) and bool(session_id)


def stop(store: PlanStore, root: Path | None, payload: dict[str, Any]) -> str:
    """Block the stop while the current plan has work this session can do (its task in
    progress, or a ready one no one holds), naming the task and the next step; let it
    happen, saying why, once blocked stop_blocks() times in a row with no task completed
    in between (Claude Code's `stop_hook_active`: this stop follows a blocked one) or when
    what is left is other agents' or waits for a gate."""
    return judge_stop(store, root, payload, lambda state: _left_for(store, state))


class StoreNeeded(Exception):
    """The plain read cannot tell what is left: the store must judge (nothing was written)."""


def judge_stop(
    store: PlanStore | None,
    root: Path | None,
    payload: dict[str, Any],
    left_of: Callable[[dict[str, Any]], WorkLeft | None],
) -> str:
    """stop()'s answer, with what is left found by `left_of` from the session's state (None:
    nothing to judge); `left_of` may raise StoreNeeded before anything is saved."""
    limit = stop_blocks()
    session_id = payload.get("session_id")
    if not stop_judged(payload) or not isinstance(session_id, str):
        return ""
    with session_state(store, root, session_id) as state:
        left = left_of(state)
        in_a_row = as_count(state.get("stop_blocks")) if payload.get("stop_hook_active") is True else 0
        block = left is not None and left.doable and in_a_row < limit
        state.update(session_id=session_id, stop_blocks=in_a_row + 1 if block else 0, updated=time.time())
    if left is None or left.done:
        return ""
    if block:
        return json.dumps({"decision": "block", "reason": f"{left.line} Or, if you cannot go on, say why and stop."})
    why = f" (the stop was blocked {in_a_row} times in a row)" if left.doable else ""
    return json.dumps({"systemMessage": f"planning-mcp: {left.line}{why}"})


def _left_for(store: PlanStore, state: dict[str, Any]) -> WorkLeft | None:
    """What is left in the session's current plan (else the only active plan) for this
    session, whose tasks are those its claims named (or no one's); time gates that have
    passed are completed first. None: no plan to judge."""
    actions = actions_on(store)
    name = _judged_plan(actions.active_plans(), state)
    if name is None:
        return None
    try:
        return actions.work_left(hook_caller(), name, _mine(state))
    except PlanningError:
        return None


def _mine(state: dict[str, Any]) -> list[str]:
    """The session's owner names (those its claims named), and "" for a task no one owns."""
    owners = state.get("owners")
    return ["", *(o for o in owners if isinstance(o, str))] if isinstance(owners, list) else [""]


def _judged_plan(active: list[str], state: dict[str, Any]) -> str | None:
    """The plan a stop is judged on: the session's current plan, else the only active plan."""
    current = state.get("current_plan")
    return current if isinstance(current, str) and current in active else active[0] if len(active) == 1 else None


def stop_without_store(root_arg: str | None, store_arg: str | None, payload: dict[str, Any]) -> str | None:
    if not stop_judged(payload):
        return ""
    folder = hook_choice(root_arg, store_arg, payload).folder
    return None if folder is None else _stop_in_folder(folder.absolute(), payload)


def _stop_in_folder(root: Path, payload: dict[str, Any]) -> str | None:
    """A stop judged from the plans read without the models (_plain_left); None: only the
    store can tell, so the caller opens it."""
    if not (root / "todo").is_dir():
        return ""
    try:
        return judge_stop(None, root, payload, lambda state: _plain_left(root, state))
    except StoreNeeded:
        return None


def _plain_left(root: Path, state: dict[str, Any]) -> WorkLeft | None:
    """_left_for from the plan read without the models: None when the stop has nothing to
    judge (no plan, or its tasks all completed); what is left, judged by the same rules
    (done.work_left) over the tasks as read (taskjson.light_task); StoreNeeded when a
    document needs the models (a gate among them: a passed one is completed first)."""
    active = plain_active_plans(root)
    if active is None:
        raise StoreNeeded
    name = _judged_plan(active, state)
    if name is None:
        return None
    line = plain_plan_line(root, name)
    if line is None:
        raise StoreNeeded
    if line.completed == line.total:
        return None
    plan = plain_plan(root, name)
    if plan is None:
        raise StoreNeeded
    from planning_core import done
    from planning_core.taskgraph import graph

    # The light plan carries every attribute the judgement reads (tests/ux/test_claude_hook_stop_plain.py).
    return done.work_left(cast("PlanSnapshot", plan), graph.utc_now(), _mine(state))


def note_work(state: dict[str, Any], tool: str, payload: dict[str, Any]) -> None:
    """Keep the owner a TaskUpdate or TaskCreate of ours named (this session's tasks); a
    task completed is progress: the Stop hook's blocks in a row start again."""
    args = payload.get("tool_input")
    if not isinstance(args, dict) or our_tool(tool) not in ("TaskUpdate", "TaskCreate"):
        return
    if args.get("status") == "completed" and not refused(payload.get("tool_response")):
        state["stop_blocks"] = 0
    owner = args.get("owner")
    if not isinstance(owner, str) or not owner:
        return
    kept = state.get("owners")
    owners = [o for o in kept if isinstance(o, str) and o != owner] if isinstance(kept, list) else []
    state["owners"] = [*owners, owner][-MAX_OWNERS:]
