"""The command line outside of serving: --version and status."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from server import __version__
from tests.support.procs import child_env, run_cli
from tests.support.waits import bound


def test_version() -> None:
    r = run_cli(["--version"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"planning-mcp {__version__}"
    assert __version__ == version("planning-mcp")


def test_status_without_plans(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    r = run_cli(["status", "--root", str(tmp_path / "empty")])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "[Session Plan] Active tasks:\n  (none)\n"
    assert r.stderr == ""


def test_status_reads_the_environment_root(tmp_path: Path) -> None:
    from planning_core import Planner
    from planning_core.stores.files import FileStore

    store = FileStore(tmp_path / "env-root")
    store.ensure_writable()
    Planner(store).create_plan("From env", date="2026-05-28", tasks=[{"subject": "Only task"}])
    r = run_cli(["status"], env={"PLANNING_MCP_ROOT": str(tmp_path / "env-root")})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "[Session Plan] Active tasks:\n  ▸ 2026-05-28-from-env [0/1 done]\n    [ ] #1: Only task\n"


def test_status_never_creates_the_root(tmp_path: Path) -> None:
    """A typo in --root is an error (exit 2, board's message), not an empty list."""
    r = run_cli(["status", "--root", str(tmp_path / "typo")])
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.startswith(f"planning-mcp: no planning folder at {tmp_path / 'typo'}; ")
    assert not (tmp_path / "typo").exists()


def test_module_entry_point_matches_the_script() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "server", "--version"],
        capture_output=True,
        text=True,
        timeout=bound(20),
        env=child_env(),
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"planning-mcp {__version__}"
