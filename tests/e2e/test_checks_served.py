"""Checks through the real CLI and a real stdio server: `planning-mcp checks` lists the check
file and says whether it is trusted, `checks trust` trusts it as it is; a server that stops
while a check runs kills the check (with all it started) and leaves the task in progress
with its checks `interrupted` (docs/decisions.md)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio

from planning_core.stores.files import FileStore
from tests.support.mcp import connect, server_params, text_of
from tests.support.procs import run_cli, wait_until
from tests.support.waits import bound

CHECKS = """
[checks.slow]
command = "echo $$ > slow.pid; while true; do sleep 0.1; done"
timeout = 600
"""


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_trust_then_a_server_stopped_mid_check_leaves_it_interrupted(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    root = project / ".planning"
    FileStore(root).ensure_writable()
    (root / "checks.toml").write_text(CHECKS)

    listed = run_cli(["checks", "--root", str(root)])
    assert listed.returncode == 0, listed.stderr
    assert "NOT trusted" in listed.stdout and "slow: echo $$ > slow.pid" in listed.stdout
    trusted = run_cli(["checks", "trust", "--root", str(root)])
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout.startswith(f"Trusted {root / 'checks.toml'} (sha256 ")
    assert f"commands may now run in {project}" in trusted.stdout
    assert "(trusted)" in run_cli(["checks", "--root", str(root)]).stdout

    async with connect(server_params(root, tmp_path), tmp_path / "server.err") as c:
        tasks = [{"subject": "Ship it", "acceptance": ["check:slow"]}]
        made = await c.call_tool("PlanCreate", {"title": "Ship", "analysis": "a", "approach": "b", "tasks": tasks})
        assert not made.is_error, text_of(made)
        await c.call_tool("TaskUpdate", {"taskId": 1, "status": "in_progress"})
        with anyio.fail_after(bound(30)):
            answer = await c.call_tool("TaskUpdate", {"taskId": 1, "status": "completed"})
        assert text_of(answer).startswith("Task #1 is being verified: check slow still runs"), text_of(answer)
        wait_until(lambda: (project / "slow.pid").exists(), "the check to start")
        shell = int((project / "slow.pid").read_text())
        assert not _group_gone(shell)
        started = time.monotonic()
    # The client closed the server's stdin: the server stopped, and with it the check.
    wait_until(lambda: _group_gone(shell), "the check's process group to be gone", timeout=bound(15))
    (name,) = FileStore(root).active_plans()
    task = FileStore(root).get_task(name, 1)
    assert task.status.value == "in_progress"
    assert task.verification is not None and task.verification["state"] == "interrupted"
    assert time.monotonic() - started < bound(15)
