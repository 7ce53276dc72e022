"""What every Claude Code hook event shares: the store the payload's folder names, the
session's state, Claude Code's names for our tools, and the answer's JSON.

Loads no models: the modules a round of counting needs are the light ones
(tests/ux/test_claude_hook_imports.py); the core's actions are imported where an event
needs them (actions_on).
"""

from __future__ import annotations

import json
import os
import re
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planning_core.store import HOOKS_DIR, PlanStore, SharedSessions

from ..common.cli_common import command_caller
from ..common.default_root import DefaultRoot, default_root
from ..common.store_choice import StoreChoice, resolve
from . import hook_state

if TYPE_CHECKING:
    from planning_core.actions import Actions
    from planning_core.caller import Caller

# Claude Code names an MCP tool mcp__<server>__<tool>; the server's name is the user's.
MCP_TOOL = re.compile(r"^mcp__.+__([A-Za-z]+)$")
EXIT_PLAN_MODE = "ExitPlanMode"  # Claude Code's tool that ends plan mode once a person approves
HOOK_COMMAND = "hook"


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


def actions_on(store: PlanStore) -> Actions:
    """The core's actions on the store, imported here: they load the models, which a
    round of counting never needs."""
    from planning_core.actions import Actions

    return Actions.over(store)


def hook_caller() -> Caller:
    """The hook as the core's caller: its writes are by `planning-mcp hook` in the plans'
    history, in a session of its own (the Claude Code session's state is the hook's, kept
    by session_state)."""
    return command_caller(HOOK_COMMAND)


def output(event: str, context: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


def session_state(
    store: PlanStore | None, root: Path | None, session_id: str
) -> AbstractContextManager[dict[str, Any]]:
    """The hook's state for one Claude Code session, saved when the block ends: in the
    store when it keeps sessions (shared by every machine), else in <root>/.hooks."""
    if root is None and isinstance(store, SharedSessions):
        return store.edit_session(f"claude-code:{session_id}")
    if root is None:
        raise ValueError("this store keeps no hook state")
    return hook_state.state_file(root, session_id)


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def our_tool(tool: str) -> str:
    """The tool's name as the server knows it, for an MCP tool; "" for Claude Code's own
    tools (one of them may share a name with ours)."""
    hit = MCP_TOOL.match(tool)
    return hit.group(1) if hit else ""


def refused(response: Any) -> bool:
    """An MCP tool result marked isError (a refusal) changed nothing."""
    if isinstance(response, dict):
        return bool(response.get("isError") or response.get("is_error"))
    return False
