"""`planning-mcp hook <event>`: Claude Code hooks that keep the agent on plan.

Claude Code runs the command with one JSON object on stdin (session_id, cwd,
hook_event_name, and per event: `source` for SessionStart, `tool_name` /
`tool_input` / `tool_response` for PostToolUse) and adds what it prints as
`hookSpecificOutput.additionalContext` to the model's context.

- SessionStart (startup, resume, clear, compact): the `# Active Plans` block, so a
  fresh or just-compacted agent knows at once what it was doing.
- UserPromptSubmit: the Active Plans line(s) before each user turn (at most
  PROMPT_CONTEXT_CHARS, about 60 tokens), as they are now: the server's connect-time
  instructions carry no block for Claude Code, so nothing stale contradicts it.
- PostToolUse: counts the session's tool calls (every tool, not only ours) and adds
  the plan reminder after 5 rounds without a plan change while a task is in
  progress, by the same function as the server (planning_core.session.round_reminders).
  The count lives in <root>/.hooks/<session>.json, written atomically (with a store that
  keeps sessions, a database, in the store under `claude-code:<session>`).

- Stop: while the session's current plan has work this session can do (a task it holds
  in progress, or a ready task no one holds), blocks the stop with the task and the next
  step (planning_core.done), at most STOP_BLOCKS_ENV (default 3; 0: never) times in a row
  without a task completed;
  work held by other agents or waiting for a gate lets the stop happen, saying so.

The hook never fails the user's session: whatever goes wrong (bad JSON, a missing
or unreadable root, a lock held too long), it prints nothing and exits 0. It creates the
planning root only for a plan approved in plan mode (where the server would make it), so
a user-level hook is otherwise harmless in projects without one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

# Claude Code waits on this process at every prompt and tool call: the modules below are
# the light ones (no models, no pydantic); the rest is imported where an event needs it,
# so counting a round never loads them (tests/ux/test_claude_hook_imports.py).
from planning_core.activeplans import PlanLine, block_text, line_text
from planning_core.errors import InvalidPlanName, PlanningError
from planning_core.names import check_plan_name
from planning_core.reminders import ReminderClock, reminded_plans, round_reminders
from planning_core.store import HOOKS_DIR, PlanFolders, PlanStore, SharedSessions
from planning_core.stores import (
    is_database_url,
    plain_active_plans,
    plain_events_since,
    plain_plan,
    plain_plan_line,
    plain_plan_lines,
)

from ..common.cli_common import EXIT_OK, command_writer
from ..common.default_root import DefaultRoot, default_root
from ..common.store_choice import StoreChoice, add_store_arguments, open_for_writing, resolve
from . import hook_state

if TYPE_CHECKING:
    import argparse

    from planning_core.actions import Actions
    from planning_core.caller import Caller
    from planning_core.done import WorkLeft
    from planning_core.models import PlanSnapshot

# Claude Code names an MCP tool mcp__<server>__<tool>; the server's name is the user's.
MCP_TOOL = re.compile(r"^mcp__.+__([A-Za-z]+)$")
EXIT_PLAN_MODE = "ExitPlanMode"  # Claude Code's tool that ends plan mode once a person approves
# Before every user turn: about 60 tokens at ~4 characters a token.
PROMPT_CONTEXT_CHARS = 240
STOP_BLOCKS_ENV = "PLANNING_MCP_STOP_BLOCKS"  # stops blocked in a row at most; 0 turns the Stop hook off
DEFAULT_STOP_BLOCKS = 3
MAX_OWNERS = 8  # owner names a session's claims used, kept to know its own tasks
HOOK_COMMAND = "hook"
HOOK_WRITER = command_writer(HOOK_COMMAND)  # who the hook's writes are by, in the plans' history


def hook_choice(root_arg: str | None, store_arg: str | None, payload: dict[str, Any]) -> StoreChoice:
    """The store every command would use (store_choice.resolve: --store, --root, then the
    environment), except that the default root is found for the payload's cwd, or for
    $CLAUDE_PROJECT_DIR when only that one has a planning folder, else the cwd's. --store
    wins over --root (a hook's command line is never refused)."""
    return resolve(store_arg, None if store_arg else root_arg, lambda: _default_root(payload))


def _default_root(payload: dict[str, Any]) -> DefaultRoot:
    cwd = payload.get("cwd")
    here = default_root(Path(cwd) if isinstance(cwd, str) and cwd else Path.cwd())
    project = os.environ.get("CLAUDE_PROJECT_DIR")
    if here.folder.is_dir() or not project:
        return here
    return default_root(Path(project))


def hook_root(root_arg: str | None, payload: dict[str, Any]) -> Path | None:
    """The planning folder the hook uses (None: a store that is not a folder)."""
    return hook_choice(root_arg, None, payload).folder


def session_file(root: Path, session_id: str) -> Path:
    return root / HOOKS_DIR / hook_state.session_name(session_id)


def _actions(store: PlanStore) -> Actions:
    """The core's actions on the store, imported here: they load the models, which a
    round of counting never needs."""
    from planning_core.actions import Actions

    return Actions.over(store)


def _caller() -> Caller:
    """The hook as the core's caller: its writes are by HOOK_WRITER, in a session of its own
    (the Claude Code session's state is the hook's, kept by _session_state)."""
    from planning_core.caller import Caller
    from planning_core.session import Session

    return Caller(HOOK_WRITER, Session())


def output(event: str, context: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


# -- events ---------------------------------------------------------------------------


def session_start(store: PlanStore, root: Path | None, payload: dict[str, Any] | None = None) -> str:
    from planning_core.rendering.render import active_plans_block

    if root is not None:
        hook_state.sweep(root)
    actions = _actions(store)
    since = actions.since_text(_last_seen(store, root, payload or {}))
    return _session_start_answer(active_plans_block(actions.summaries()), since)


def _session_start_answer(block: str, since: str) -> str:
    """The Active Plans block, then "since you were last here" when anything happened."""
    return output("SessionStart", block + (f"\n\n{since}" if since else ""))


def _session_start_in_folder(root: Path, payload: dict[str, Any]) -> str | None:
    """session_start on a planning folder, its plans and history read without the models
    (a session's first wait); None when only the store can tell (a task file the models
    must judge): the caller opens it."""
    from planning_core.rendering.timeline import since_read

    if not (root / "todo").is_dir():
        return ""
    plans = plain_plan_lines(root)
    if plans is None:
        return None  # before the session's visit is recorded: the store's read records it
    hook_state.sweep(root)
    last_seen = _last_seen(None, root, payload)
    since = since_read(lambda start, limit: plain_events_since(root, start, limit) or [], last_seen)
    return _session_start_answer(block_text(line_text(p) for p in plans), since)


def _last_seen(store: PlanStore | None, root: Path | None, payload: dict[str, Any]) -> float | None:
    """When this Claude Code session was last here (its hook state's last update; a
    resumed or compacted session keeps its id), and now it is: None for a new session."""
    session_id = payload.get("session_id")
    if not isinstance(session_id, str) or not session_id or (root is None and not isinstance(store, SharedSessions)):
        return None
    if root is not None and not hook_state.exists(root, session_id):
        return None  # a new session: nothing is written for it before its first tool call
    with _session_state(store, root, session_id) as state:
        seen = state.get("updated")
        state.update(session_id=session_id, updated=time.time())
    return float(seen) if isinstance(seen, int | float) else None


def user_prompt_submit(store: PlanStore, root: Path | None, payload: dict[str, Any]) -> str:
    """The Active Plans block, cut to PROMPT_CONTEXT_CHARS: the session's current plan
    first when there are more plans than fit, then `(+N more: PlanList)`."""
    from planning_core.rendering.render import line_of

    plans = [line_of(s) for s in _actions(store).summaries() if not s.archived]
    return prompt_block(plans, _saved_current_plan(store, root, payload))


def prompt_block(plans: list[PlanLine], current: str | None) -> str:
    """user_prompt_submit's answer from the plans' lines, however they were read."""
    plans.sort(key=lambda p: p.name != current)  # stable: the rest stay oldest first
    block = block_text(line_text(p) for p in plans)
    lines = block.split("\n")
    while len(block) > PROMPT_CONTEXT_CHARS and len(lines) > 2:
        lines.pop()
        more = len(plans) - (len(lines) - 1)
        block = "\n".join([*lines, f"(+{more} more: PlanList)"])
    if len(block) > PROMPT_CONTEXT_CHARS:  # one plan whose current task has a long subject
        block = block[: PROMPT_CONTEXT_CHARS - 1] + "…"
    return output("UserPromptSubmit", block)


def _prompt_in_folder(root: Path, payload: dict[str, Any]) -> str | None:
    """user_prompt_submit on a planning folder, its plans read without the models (the
    hook runs before every prompt); None when only the store can tell (a task file the
    models must judge): the caller opens it."""
    if not (root / "todo").is_dir():
        return ""
    plans = plain_plan_lines(root)
    if plans is None:
        return None
    return prompt_block(plans, _saved_current_plan(None, root, payload))


def _saved_current_plan(store: PlanStore | None, root: Path | None, payload: dict[str, Any]) -> str | None:
    session_id = payload.get("session_id")
    if not isinstance(session_id, str) or not session_id or (root is None and not isinstance(store, SharedSessions)):
        return None
    try:
        with _session_state(store, root, session_id) as state:
            current = state.get("current_plan")
    except hook_state.HookFolderRefused:  # no state kept here: the block, in its plain order
        return None
    return current if isinstance(current, str) else None


def post_tool_use(store: PlanStore, root: Path | None, payload: dict[str, Any], event: str = "PostToolUse") -> str:
    """One round of the session. `event` PostToolUseFailure: Claude Code's event for a
    refused call (an MCP result marked isError; observed in 2.1.197): a round that
    changed nothing."""
    return count_round(lambda: store, store, root, payload, event)


def count_round(
    open_store: Callable[[], PlanStore],
    store: PlanStore | None,
    root: Path | None,
    payload: dict[str, Any],
    event: str = "PostToolUse",
) -> str:
    """post_tool_use with the store opened only when the round needs it (a reminder's
    read, a plan approved): `store` is the one already open, if any (a store without
    folders keeps the hook's state, so it is always open)."""
    session_id = payload.get("session_id")
    tool = payload.get("tool_name")
    if not isinstance(session_id, str) or not session_id or not isinstance(tool, str):
        return ""
    if tool == EXIT_PLAN_MODE and event == "PostToolUse":
        return exit_plan_mode(open_store(), root, session_id, payload)
    with _session_state(store, root, session_id) as state:
        clock = ReminderClock(plan_quiet=_int(state.get("plan_quiet")))
        current = state.get("current_plan") if isinstance(state.get("current_plan"), str) else None
        current = _named_plan(payload, tool) or current
        # The server's policy (session.round_reminders), on this session's saved count. Only
        # our own tools (an MCP tool's name) can change the plan; the todo list is the server's.
        due = round_reminders(
            clock,
            _our_tool(tool),
            succeeded=event == "PostToolUse" and not _refused(payload.get("tool_response")),
            plan_has_work=lambda: _has_work(open_store, root, current),
        )
        if event == "PostToolUse":
            _work_seen(state, tool, payload)
        state.update(session_id=session_id, plan_quiet=clock.plan_quiet, current_plan=current, updated=time.time())
    if due:
        return output(event, "\n".join(due))
    return ""


def stop_blocks() -> int:
    """How many stops in a row the Stop hook may block (STOP_BLOCKS_ENV; 0: none)."""
    value = os.environ.get(STOP_BLOCKS_ENV, "").strip()
    return int(value) if value.isdigit() else DEFAULT_STOP_BLOCKS


def _stop_judged(payload: dict[str, Any]) -> bool:
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
    if not _stop_judged(payload) or not isinstance(session_id, str):
        return ""
    with _session_state(store, root, session_id) as state:
        left = left_of(state)
        in_a_row = _int(state.get("stop_blocks")) if payload.get("stop_hook_active") is True else 0
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
    actions = _actions(store)
    name = _judged_plan(actions.active_plans(), state)
    if name is None:
        return None
    try:
        return actions.work_left(_caller(), name, _mine(state))
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


def _work_seen(state: dict[str, Any], tool: str, payload: dict[str, Any]) -> None:
    """Keep the owner a TaskUpdate or TaskCreate of ours named (this session's tasks); a
    task completed is progress: the Stop hook's blocks in a row start again."""
    args = payload.get("tool_input")
    if not isinstance(args, dict) or _our_tool(tool) not in ("TaskUpdate", "TaskCreate"):
        return
    if args.get("status") == "completed" and not _refused(payload.get("tool_response")):
        state["stop_blocks"] = 0
    owner = args.get("owner")
    if not isinstance(owner, str) or not owner:
        return
    kept = state.get("owners")
    owners = [o for o in kept if isinstance(o, str) and o != owner] if isinstance(kept, list) else []
    state["owners"] = [*owners, owner][-MAX_OWNERS:]


def _approved(payload: dict[str, Any]) -> tuple[str, str] | None:
    """(plan text, plan file) of an approved ExitPlanMode call: `tool_input` holds
    `plan` and `planFilePath`; `tool_response` `plan` and `filePath` (the one to trust
    when the person edited the plan in the dialog: `planWasEdited`)."""
    args = _dict(payload.get("tool_input"))
    answer = _dict(payload.get("tool_response"))
    text = answer.get("plan") if isinstance(answer.get("plan"), str) else args.get("plan")
    where = answer.get("filePath") or args.get("planFilePath") or ""
    if not isinstance(text, str) or not text.strip():
        return None
    return text, str(where)


def exit_plan_mode(store: PlanStore, root: Path | None, session_id: str, payload: dict[str, Any]) -> str:
    """Claude Code's plan mode approved: the plan becomes a Session Plan (plan.md the
    approved text, its steps the tasks); approved again in this session, that plan is
    revised, never copied."""
    approved = _approved(payload)
    if approved is None:
        return ""
    from planning_core.actions import CREATED_PLAN
    from planning_core.rendering.plan_text import read_plan

    text, where = approved
    actions, caller = _actions(store), _caller()
    with _session_state(store, root, session_id) as state:
        made = _dict(state.get("plan_mode_plans"))
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


# -- helpers ----------------------------------------------------------------------------


def _session_state(
    store: PlanStore | None, root: Path | None, session_id: str
) -> AbstractContextManager[dict[str, Any]]:
    """The hook's state for one Claude Code session, saved when the block ends: in the
    store when it keeps sessions (shared by every machine), else in <root>/.hooks."""
    if root is None and isinstance(store, SharedSessions):
        return store.edit_session(f"claude-code:{session_id}")
    if root is None:
        raise ValueError("this store keeps no hook state")
    return hook_state.state_file(root, session_id)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _our_tool(tool: str) -> str:
    """The tool's name as the server knows it, for an MCP tool; "" for Claude Code's own
    tools (one of them may share a name with ours)."""
    hit = MCP_TOOL.match(tool)
    return hit.group(1) if hit else ""


def _refused(response: Any) -> bool:
    """An MCP tool result marked isError (a refusal) changed nothing."""
    if isinstance(response, dict):
        return bool(response.get("isError") or response.get("is_error"))
    return False


def _named_plan(payload: dict[str, Any], tool: str) -> str | None:
    """The plan this call worked on, when it says (the session's current plan)."""
    if not tool.startswith("mcp__"):
        return None
    args = payload.get("tool_input")
    if isinstance(args, dict) and isinstance(args.get("plan"), str) and args["plan"]:
        return str(args["plan"])
    if _our_tool(tool) == "PlanCreate":
        return _created_plan(payload.get("tool_response"))
    return None


def _created_plan(response: Any) -> str | None:
    """The plan a PlanCreate answer names. Claude Code passes an MCP tool's answer as its
    content blocks (a text-only result) or, when it has structured content, as that
    content's JSON in a string; other shapes: a result holding either."""
    from planning_core.actions import created_plan_name

    if isinstance(response, str):
        with contextlib.suppress(ValueError):
            response = json.loads(response)
        if isinstance(response, dict) and "structuredContent" not in response:
            response = {"structuredContent": response}
    if isinstance(response, dict):
        structured = response.get("structuredContent")
        plan = structured.get("plan") if isinstance(structured, dict) else None
        if isinstance(plan, dict) and isinstance(plan.get("name"), str):
            with contextlib.suppress(InvalidPlanName):
                return check_plan_name(plan["name"])
        response = response.get("content")
    if isinstance(response, str):
        return created_plan_name(response)
    blocks = response if isinstance(response, list) else []
    for block in blocks:
        text = block.get("text") if isinstance(block, dict) else None
        if isinstance(text, str) and (name := created_plan_name(text)):
            return name
    return None


def _has_work(open_store: Callable[[], PlanStore], root: Path | None, current: str | None) -> bool:
    """Actions.has_work, read from the task files without the models where they can tell."""
    plain = None if root is None else _plain_has_work(root, current)
    return _actions(open_store()).has_work(current) if plain is None else plain


def _plain_has_work(root: Path, current: str | None) -> bool | None:
    """Planner.has_work_in_progress on a planning folder read plainly (a plan's line names
    its current task while one is in progress); None when only the store can tell."""
    lines = [plain_plan_line(root, name) for name in reminded_plans(plain_active_plans(root) or [], current)]
    if any(line is None for line in lines):
        return None
    return any(line.current is not None for line in lines if line is not None)


def hook_store(
    root_arg: str | None, store_arg: str | None, payload: dict[str, Any], *, writes: bool = False
) -> PlanStore | None:
    """The store hook_choice names: a database, or a planning folder that exists. None
    when there is no planning folder here: this project does not use us, unless the hook
    `writes` (a plan approved in plan mode): then the folder is made where the server
    would make it on its first write, as the server makes it (store_choice.open_for_writing)."""
    choice = hook_choice(root_arg, store_arg, payload)
    if choice.folder is None and not is_database_url(choice.url):
        return None
    if choice.folder is not None and not writes and not (choice.folder / "todo").is_dir():
        return None  # a project without plans: nothing loaded
    if choice.folder is None:
        return choice.open()
    if writes:
        store = open_for_writing(choice)  # checks the folder can be made, as the server does
        choice.folder.mkdir(exist_ok=True)  # before the hook's own state file goes in it
        store.prepare()  # a root that exists gets its layout (todo/, done/, .gitignore)
        return store
    return choice.open()


def _writes(event: str | None, payload: dict[str, Any]) -> bool:
    """Does this call bring something to write (an approved plan), so that a project
    without a planning folder gets one?"""
    return event == "PostToolUse" and payload.get("tool_name") == EXIT_PLAN_MODE and _approved(payload) is not None


def handle(event: str | None, root_arg: str | None, raw: str, store_arg: str | None = None) -> str:
    """The text to print for one hook call ("" for nothing). May raise; main() fails open."""
    payload = json.loads(raw) if raw.strip() else {}
    if not isinstance(payload, dict):
        return ""
    event = event or payload.get("hook_event_name")
    answer = _answer_without_store(event, root_arg, store_arg, payload)
    if answer is not None:
        return answer
    store = hook_store(root_arg, store_arg, payload, writes=_writes(event, payload))
    if store is None:
        return ""
    try:
        root = _root_of(store)
        if event == "SessionStart":
            return session_start(store, root, payload)
        if event in ("PostToolUse", "PostToolUseFailure"):
            return post_tool_use(store, root, payload, event)
        if event == "UserPromptSubmit":
            return user_prompt_submit(store, root, payload)
        if event == "Stop":
            return stop(store, root, payload)
        return ""
    finally:
        store.close()


# The events a folder's plain read can answer (a Stop has its own look).
_READ_PLAINLY = ("PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "SessionStart")


def _answer_without_store(
    event: str | None, root_arg: str | None, store_arg: str | None, payload: dict[str, Any]
) -> str | None:
    """The answer of a call that needs no store opened (and so no models loaded): a stop
    not judged or with nothing to judge, a round counted in a planning folder, the line
    before a prompt read plainly. None: open the store."""
    if event == "Stop":
        return _stop_without_store(root_arg, store_arg, payload)
    if event not in _READ_PLAINLY or _writes(event, payload):
        return None
    folder = hook_choice(root_arg, store_arg, payload).folder
    if folder is None:
        return None
    if event == "UserPromptSubmit":
        return _prompt_in_folder(folder.absolute(), payload)
    if event == "SessionStart":
        return _session_start_in_folder(folder.absolute(), payload)
    return _round_in_folder(folder.absolute(), root_arg, store_arg, payload, event)


def _stop_without_store(root_arg: str | None, store_arg: str | None, payload: dict[str, Any]) -> str | None:
    if not _stop_judged(payload):
        return ""
    folder = hook_choice(root_arg, store_arg, payload).folder
    return None if folder is None else _stop_in_folder(folder.absolute(), payload)


def _round_in_folder(
    root: Path, root_arg: str | None, store_arg: str | None, payload: dict[str, Any], event: str
) -> str:
    """A round counted in <root>/.hooks, the file store opened only if the round reads
    the plans (a reminder due): most tool calls never load it."""
    if not (root / "todo").is_dir():
        return ""
    opened: list[PlanStore] = []

    def open_store() -> PlanStore:
        if not opened:
            store = hook_store(root_arg, store_arg, payload)
            if store is None:
                raise FileNotFoundError(root / "todo")  # removed since the round began
            opened.append(store)
        return opened[0]

    try:
        return count_round(open_store, None, root, payload, event)
    finally:
        for store in opened:
            store.close()


def _root_of(store: PlanStore) -> Path | None:
    """The file store's root (where .hooks lives); None for stores without folders."""
    return store.root if isinstance(store, PlanFolders) else None


def add_hook_parser(sub: Any) -> None:
    """`planning-mcp hook [EVENT] [--root DIR] [--store URL]` (added to cli.parser(), and
    to entry.py's parser of this command alone)."""
    h = sub.add_parser(HOOK_COMMAND, help="Claude Code hook: reads the hook JSON on stdin (docs/claude-code-hooks.md)")
    h.add_argument(
        "event",
        nargs="?",
        help="SessionStart, UserPromptSubmit, PostToolUse, PostToolUseFailure or Stop "
        "(default: the payload's hook_event_name)",
    )
    add_store_arguments(h)
    h.set_defaults(run_alone=run_hook)  # finds its own store, and always exits 0


def run_hook(args: argparse.Namespace) -> int:
    """The parsed `hook` command; --root and --store may also come before `hook`."""
    return main(args.event, args.sub_root or args.root, store_arg=args.sub_store or args.store)


def main(
    event: str | None,
    root_arg: str | None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    store_arg: str | None = None,
) -> int:
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    try:
        text = handle(event, root_arg, stdin.read(), store_arg)
    except Exception as e:  # a lock waited for too long is a TimeoutError
        # Fail open: Claude Code shows stderr only in verbose mode; the session goes on.
        with contextlib.suppress(Exception):
            print(f"planning-mcp hook: ignored ({type(e).__name__}: {e})", file=sys.stderr)
        return EXIT_OK
    if text:
        stdout.write(text + "\n")
        stdout.flush()
    return EXIT_OK
