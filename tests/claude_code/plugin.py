"""Claude Code with the plugin installed from this checkout's marketplace, on both releases
the README names: the pinned one the session tests were written against
($PLANNING_MCP_CLAUDE_SESSION_BIN, 2.1.197) and the newest tested one
($PLANNING_MCP_CLAUDE_BIN, tests/hosts/install.sh: 2.1.332)."""

from __future__ import annotations

import os
import re
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

from tests.support.claude_model import ClaudeHome, ScriptedModel, claude_bin, claude_missing
from tests.support.procs import REPO, as_cloned, wait_until
from tests.support.waits import bound

PLUGIN = "planning-mcp"
NEWEST_ENV = "PLANNING_MCP_CLAUDE_BIN"
NEWEST_DEFAULT = REPO / "tests" / "hosts" / "node_modules" / ".bin" / "claude"
RELEASES = ("pinned", "newest")


def release_bin(release: str) -> str:
    """The CLI of `release`; a missing one skips, or fails where CI requires it."""
    if release == "pinned":
        found = claude_bin()
    else:
        named = Path(os.environ.get(NEWEST_ENV) or NEWEST_DEFAULT)
        found = str(named) if named.is_file() else None
    if found is None:
        why = f"Claude Code's CLI ({release}) is not installed (.ci/run installs both releases)"
        claude_missing(why)
    return found


def install_plugin(binary: str, home: ClaudeHome, model: ScriptedModel) -> None:
    """The README's two commands, which both releases accept: add the marketplace (this
    checkout, as a clone has it), then install the plugin from it."""
    env = home.env(model)
    for args in (["plugin", "marketplace", "add", str(as_cloned())], ["plugin", "install", f"{PLUGIN}@{PLUGIN}"]):
        done = subprocess.run(
            [binary, *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=home.project,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def fresh_project(folder: Path) -> Path:
    """A new git project: no .planning, no .mcp.json, no settings of ours."""
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True, timeout=30)
    return folder


CURSOR = re.compile(r"❯ (\d)\. ")  # the dialog's selected answer
APPROVE = "2"  # the dialog's second answer: approve, edits asked one by one
MAX_MOVES = 20
DIALOG = "Would you like to proceed?"


def _answer(ui: Any) -> str | None:
    found = CURSOR.search(ui.screen())
    return found.group(1) if found else None


def _moved(ui: Any, before: str | None) -> bool:
    return _answer(ui) != before


def _answered(ui: Any) -> bool:
    return DIALOG not in ui.screen()


def approve_plan(ui: Any) -> None:
    """Answer Claude Code's plan approval dialog with "Yes" (its second answer). A fresh
    dialog ignores keys for a moment on the newer release, so the cursor is moved one step
    at a time, each step waited for on the screen (a key it ignored is sent again), until it
    is on answer 2; then Enter, until the dialog closes."""
    ui.wait_for(DIALOG, timeout=bound(15))
    for _ in range(MAX_MOVES):
        at = _answer(ui)
        if at == APPROVE:
            ui.keys("Enter")
            try:
                wait_until(partial(_answered, ui), "the dialog to close", bound(2))
                return
            except AssertionError:
                continue  # ignored too: sent again
        ui.keys("Down")
        try:
            wait_until(partial(_moved, ui, at), "the dialog's cursor to move", bound(2))
        except AssertionError:
            continue  # ignored: sent again
    raise AssertionError(f"the plan dialog never took a key; last screen:\n{ui.screen()}")
