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

- Stop: while the session's current plan has work this session can do, blocks the stop
  with the task and the next step, a few times in a row at most (stop.py).
- PostToolUse of ExitPlanMode: the plan a person approved becomes a Session Plan (plan_mode.py).

The hook never fails the user's session: whatever goes wrong (bad JSON, a missing
or unreadable root, a lock held too long), it prints nothing and exits 0. It creates the
planning root only for a plan approved in plan mode (where the server would make it), so
a user-level hook is otherwise harmless in projects without one.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

# Claude Code waits on this process at every prompt and tool call: the modules below are
# the light ones (no models, no pydantic); the rest is imported where an event needs it,
# so counting a round never loads them (tests/ux/test_claude_hook_imports.py).
from planning_core.activeplans import PlanLine, block_text, line_text
from planning_core.errors import InvalidPlanName
from planning_core.names import check_plan_name
from planning_core.reminders import ReminderClock, reminded_plans, round_reminders
from planning_core.store import PlanFolders, PlanStore, SharedSessions
from planning_core.stores import (
    is_database_url,
    plain_active_plans,
    plain_events_since,
    plain_plan_line,
    plain_plan_lines,
)

from ..common.cli_common import EXIT_OK
from ..common.store_choice import add_store_arguments, open_for_writing
from . import hook_state
from .hook_common import (
    EXIT_PLAN_MODE,
    HOOK_COMMAND,
    actions_on,
    as_count,
    hook_choice,
    our_tool,
    output,
    refused,
    session_state,
)
from .plan_mode import approved_plan, exit_plan_mode
from .stop import note_work, stop, stop_without_store

if TYPE_CHECKING:
    import argparse

# Before every user turn: about 60 tokens at ~4 characters a token.
PROMPT_CONTEXT_CHARS = 240


def session_start(store: PlanStore, root: Path | None, payload: dict[str, Any] | None = None) -> str:
    from planning_core.rendering.render import active_plans_block

    if root is not None:
        hook_state.sweep(root)
    actions = actions_on(store)
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
    with session_state(store, root, session_id) as state:
        seen = state.get("updated")
        state.update(session_id=session_id, updated=time.time())
    return float(seen) if isinstance(seen, int | float) else None


def user_prompt_submit(store: PlanStore, root: Path | None, payload: dict[str, Any]) -> str:
    """The Active Plans block, cut to PROMPT_CONTEXT_CHARS: the session's current plan
    first when there are more plans than fit, then `(+N more: PlanList)`."""
    from planning_core.rendering.render import line_of

    plans = [line_of(s) for s in actions_on(store).summaries() if not s.archived]
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
        with session_state(store, root, session_id) as state:
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
    with session_state(store, root, session_id) as state:
        clock = ReminderClock(plan_quiet=as_count(state.get("plan_quiet")))
        current = state.get("current_plan") if isinstance(state.get("current_plan"), str) else None
        current = _named_plan(payload, tool) or current
        # The server's policy (session.round_reminders), on this session's saved count. Only
        # our own tools (an MCP tool's name) can change the plan; the todo list is the server's.
        due = round_reminders(
            clock,
            our_tool(tool),
            succeeded=event == "PostToolUse" and not refused(payload.get("tool_response")),
            plan_has_work=lambda: _has_work(open_store, root, current),
        )
        if event == "PostToolUse":
            note_work(state, tool, payload)
        state.update(session_id=session_id, plan_quiet=clock.plan_quiet, current_plan=current, updated=time.time())
    if due:
        return output(event, "\n".join(due))
    return ""


def _named_plan(payload: dict[str, Any], tool: str) -> str | None:
    """The plan this call worked on, when it says (the session's current plan)."""
    if not tool.startswith("mcp__"):
        return None
    args = payload.get("tool_input")
    if isinstance(args, dict) and isinstance(args.get("plan"), str) and args["plan"]:
        return str(args["plan"])
    if our_tool(tool) == "PlanCreate":
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
    return actions_on(open_store()).has_work(current) if plain is None else plain


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
    return event == "PostToolUse" and payload.get("tool_name") == EXIT_PLAN_MODE and approved_plan(payload) is not None


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
        return stop_without_store(root_arg, store_arg, payload)
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
