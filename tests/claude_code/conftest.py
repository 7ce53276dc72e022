"""Claude Code's real CLI, offline, against a scripted model on 127.0.0.1
(tests/support/claude_model.py). CI installs the CLI (.ci/run) and sets
PLANNING_MCP_REQUIRE_CLAUDE=1: there a missing CLI fails these tests instead of skipping."""

from __future__ import annotations

from pathlib import Path

import pytest

from planning_core.stores.files import FileStore
from tests.support.claude_model import CLAUDE_BIN_ENV, ClaudeHome, claude_bin, claude_missing, write_project


@pytest.fixture
def claude() -> str:
    found = claude_bin()
    if found is None:
        why = f"Claude Code's CLI is not installed (set {CLAUDE_BIN_ENV}; .ci/run installs it from npm)"
        claude_missing(why)
    return found


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "shop" / ".planning"
    FileStore(folder).ensure_writable()
    return folder


@pytest.fixture
def home(tmp_path: Path, root: Path) -> ClaudeHome:
    project = root.parent
    write_project(project, root)
    claude_home = ClaudeHome(tmp_path / "claude", project)
    claude_home.prepare()
    return claude_home
