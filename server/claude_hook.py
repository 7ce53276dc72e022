"""`planning-mcp hook <event>`: Claude Code hooks that keep the agent on plan.

Claude Code runs the command with one JSON object on stdin (session_id, cwd,
hook_event_name, and per event: `source` for SessionStart, `tool_name` /
`tool_input` / `tool_response` for PostToolUse) and adds what it prints as
`hookSpecificOutput.additionalContext` to the model's context.

- SessionStart (startup, resume, clear, compact): the `# Active Plans` block, so a
  fresh or just-compacted agent knows at once what it was doing.
- PostToolUse: counts the session's tool calls (every tool, not only ours) and adds
  the plan reminder after 5 rounds without a plan change while a task is in
  progress, with the same policy as the server (planning_core.session.ReminderClock).
  The count lives in <root>/.hooks/<session>.json, written atomically.

The hook never fails the user's session: whatever goes wrong (bad JSON, a missing
or unreadable root, a lock held too long), it prints nothing and exits 0. It never
creates the planning root, so a user-level hook is harmless in projects without one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import filelock

from planning_core import FileStore, Planner
from planning_core.atomicfile import replace_many
from planning_core.regularfile import UnreadableFile, read_regular
from planning_core.render import active_plans_block
from planning_core.session import PLAN_CHANGING_TOOLS, PLAN_REMINDER, ReminderClock

from .cli_views import _snapshots

HOOKS_DIR = ".hooks"
STALE_AFTER = 7 * 24 * 3600  # session files older than this are removed at SessionStart
LOCK_TIMEOUT = 2.0
MAX_STATE_BYTES = 64 * 1024  # a state file holds a few short fields; more is not ours
_CHANGES = "|".join(sorted(PLAN_CHANGING_TOOLS))
PLAN_CHANGE_TOOL = re.compile(rf"^mcp__.+__({_CHANGES})$")
CREATED_PLAN = re.compile(r"Created plan (\d{4}-\d{2}-\d{2}-[a-z0-9-]{1,60}(?:-\d+)?)")


def hook_root(root_arg: str | None, payload: dict[str, Any]) -> Path:
    """--root, else $PLANNING_MCP_ROOT, else the nearest `.planning` at or above the
    payload's cwd, else $CLAUDE_PROJECT_DIR/.planning, else <cwd>/.planning."""
    explicit = root_arg or os.environ.get("PLANNING_MCP_ROOT")
    if explicit:
        return Path(explicit).expanduser().absolute()
    cwd = payload.get("cwd")
    start = Path(cwd) if isinstance(cwd, str) and cwd else None
    if start is not None:
        for folder in (start, *start.parents):
            if (folder / ".planning").is_dir():
                return folder / ".planning"
    project = os.environ.get("CLAUDE_PROJECT_DIR")
    if project:
        return Path(project) / ".planning"
    return (start or Path.cwd()) / ".planning"


def session_file(root: Path, session_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", session_id)[:80]
    if safe != session_id:
        safe += "-" + hashlib.sha256(session_id.encode()).hexdigest()[:12]
    return root / HOOKS_DIR / f"{safe}.json"


def output(event: str, context: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


# -- events ---------------------------------------------------------------------------


def session_start(store: FileStore) -> str:
    _sweep(store.root / HOOKS_DIR)
    block = active_plans_block(s.summary() for s in _snapshots(store, store.active_plans()))
    return output("SessionStart", block)


def post_tool_use(store: FileStore, payload: dict[str, Any]) -> str:
    session_id = payload.get("session_id")
    tool = payload.get("tool_name")
    if not isinstance(session_id, str) or not session_id or not isinstance(tool, str):
        return ""
    path = session_file(store.root, session_id)
    path.parent.mkdir(exist_ok=True)
    with filelock.FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT):
        state = _load(path)
        clock = ReminderClock(plan_quiet=_int(state.get("plan_quiet")))
        changed = bool(PLAN_CHANGE_TOOL.match(tool)) and not _refused(payload.get("tool_response"))
        clock.tick(plan_changed=changed, todo_changed=False)
        current = state.get("current_plan") if isinstance(state.get("current_plan"), str) else None
        current = _named_plan(payload, tool) or current
        state.update(session_id=session_id, plan_quiet=clock.plan_quiet, current_plan=current, updated=time.time())
        replace_many([(path, (json.dumps(state, ensure_ascii=False) + "\n").encode())])
    if clock.plan_due() and _has_work(store, current):
        return output("PostToolUse", PLAN_REMINDER)
    return ""


# -- helpers ----------------------------------------------------------------------------


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_regular(path, MAX_STATE_BYTES, "a hook state file"))
    except (OSError, ValueError, UnreadableFile):  # a FIFO there must not hang Claude Code
        return {}
    return data if isinstance(data, dict) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


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
    if tool.endswith("__PlanCreate"):
        hit = CREATED_PLAN.search(json.dumps(payload.get("tool_response"), ensure_ascii=False))
        if hit:
            return hit.group(1)
    return None


def _has_work(store: FileStore, current: str | None) -> bool:
    return Planner(store).has_work_in_progress(current)


def _sweep(folder: Path) -> None:
    cutoff = time.time() - STALE_AFTER
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            with contextlib.suppress(OSError):
                if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)


def handle(event: str | None, root_arg: str | None, raw: str) -> str:
    """The text to print for one hook call ("" for nothing). May raise; main() fails open."""
    payload = json.loads(raw) if raw.strip() else {}
    if not isinstance(payload, dict):
        return ""
    event = event or payload.get("hook_event_name")
    root = hook_root(root_arg, payload)
    if not (root / "todo").is_dir():
        return ""  # no planning folder here: this project does not use planning-mcp
    store = FileStore(root)
    if event == "SessionStart":
        return session_start(store)
    if event == "PostToolUse":
        return post_tool_use(store, payload)
    return ""


def main(event: str | None, root_arg: str | None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    try:
        text = handle(event, root_arg, stdin.read())
    except (Exception, filelock.Timeout) as e:
        # Fail open: Claude Code shows stderr only in verbose mode; the session goes on.
        with contextlib.suppress(Exception):
            print(f"planning-mcp hook: ignored ({type(e).__name__}: {e})", file=sys.stderr)
        return 0
    if text:
        stdout.write(text + "\n")
        stdout.flush()
    return 0
