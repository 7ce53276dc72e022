"""`planning-mcp watch` in a real terminal (tmux): another process changes a task and
the pane shows the new state."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.procs import REPO, child_env
from tests.support.seed import PLAN_NAME
from tests.support.terminal import NO_TMUX, TMUX, Tmux
from tests.support.waits import bound

pytestmark = pytest.mark.skipif(TMUX is None, reason=NO_TMUX)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    """A private tmux server (its own socket), killed at the end."""
    t = Tmux(tmp_path / "tmux.sock", "watch")
    try:
        yield t
    finally:
        t.kill()


def test_watch_redraws_when_another_process_changes_a_task(root: Path, seeded: str, tmux: Tmux) -> None:
    env = {
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
        "COLUMNS": "",
        "LINES": "",
        "PLANNING_MCP_ROOT": str(root),
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    tmux.start(f"env {exports} {shlex.quote(sys.executable)} -m server watch --interval 0.2")
    # The handshake: watch has drawn its first frame, so it has read the plan once and
    # what it draws after the change below can only come from watching.
    tmux.wait_for(PLAN_NAME, "2/4 done", "#3 Add login endpoint", "(alice)")

    change = (
        "from planning_core import Planner; from planning_core.stores.files import FileStore; "
        f"p = Planner(FileStore({str(root)!r})); "
        f"p.update_task({PLAN_NAME!r}, 3, status='completed'); "
        f"p.update_task({PLAN_NAME!r}, 4, status='in_progress', owner='bob')"
    )
    subprocess.run([sys.executable, "-c", change], check=True, timeout=bound(30), env=child_env())

    screen = tmux.wait_for("3/4 done", "#4 Add logout endpoint", "(bob)")
    assert "#3 Add login endpoint" not in screen  # no longer in progress
    tmux.keys("C-c")
