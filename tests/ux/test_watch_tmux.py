"""`planning-mcp watch` in a real terminal (tmux): another process changes a task and
the pane shows the new state."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import PLAN_NAME

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(
    TMUX is None, reason="tmux is not installed (apt-get install -y tmux; .ci/run installs it)"
)
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[list[str]]:
    """A private tmux server (its own socket), killed at the end."""
    base = [str(TMUX), "-S", str(tmp_path / "tmux.sock")]
    yield base
    subprocess.run([*base, "kill-server"], capture_output=True, timeout=10)


def capture(base: list[str]) -> str:
    r = subprocess.run([*base, "capture-pane", "-p", "-t", "watch"], capture_output=True, text=True, timeout=10)
    return r.stdout


def wait_for(base: list[str], *needles: str, timeout: float = 15) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = capture(base)
        if all(n in screen for n in needles):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"pane never showed {needles!r}; last screen:\n{screen}")


def test_watch_redraws_when_another_process_changes_a_task(root: Path, seeded: str, tmux: list[str]) -> None:
    env = {
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
        "COLUMNS": "",
        "LINES": "",
        "PLANNING_MCP_ROOT": str(root),
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    cmd = f"env {exports} {shlex.quote(sys.executable)} -m server watch --interval 0.2"
    subprocess.run([*tmux, "new-session", "-d", "-s", "watch", "-x", "110", "-y", "30", cmd], check=True, timeout=10)
    wait_for(tmux, PLAN_NAME, "2/4 done", "#3 Add login endpoint", "(alice)")

    change = (
        f"from planning_core import FileStore, Planner; p = Planner(FileStore({str(root)!r})); "
        f"p.update_task({PLAN_NAME!r}, 3, status='completed'); "
        f"p.update_task({PLAN_NAME!r}, 4, status='in_progress', owner='bob')"
    )
    subprocess.run([sys.executable, "-c", change], check=True, timeout=30, env={**os.environ, "PYTHONPATH": str(REPO)})

    screen = wait_for(tmux, "3/4 done", "#4 Add logout endpoint", "(bob)")
    assert "#3 Add login endpoint" not in screen  # no longer in progress
    subprocess.run([*tmux, "send-keys", "-t", "watch", "C-c"], timeout=10)
