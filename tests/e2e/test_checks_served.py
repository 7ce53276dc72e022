"""Checks through the real CLI and a real stdio server, on files and on PostgreSQL:
`planning-mcp checks` lists the check file and says whether it is trusted, `checks trust`
trusts it as it is; a server that stops while a check runs kills the check (with all it
started) and leaves the task in progress with its checks `interrupted` (docs/decisions.md)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

from planning_core.stores import open_store
from planning_core.stores.files import FileStore
from planning_core.verify import CheckFile
from tests.support.mcp import connect, text_of
from tests.support.procs import run_cli, wait_until
from tests.support.store_urls import SERVED_KINDS, stdio_params, store_url
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


@pytest.mark.parametrize("kind", SERVED_KINDS)
async def test_trust_then_a_server_stopped_mid_check_leaves_it_interrupted(tmp_path: Path, kind: str) -> None:
    url = store_url(kind, tmp_path)
    if kind == "files":
        FileStore(Path(url)).ensure_writable()
    # Where the server finds the check file: beside a folder's plans, else under its working directory.
    checks = CheckFile.of_root(Path(url) if kind == "files" else None)
    checks.path.parent.mkdir(parents=True, exist_ok=True)
    checks.path.write_text(CHECKS)

    listed = run_cli(["checks", "--store", url])
    assert listed.returncode == 0, listed.stderr
    assert "NOT trusted" in listed.stdout and "slow: echo $$ > slow.pid" in listed.stdout
    trusted = run_cli(["checks", "trust", "--store", url])
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout.startswith(f"Trusted {checks.path} (sha256 ")
    assert f"commands may now run in {checks.project}" in trusted.stdout
    assert "(trusted)" in run_cli(["checks", "--store", url]).stdout

    async with connect(stdio_params(url, Path.cwd()), tmp_path / "server.err") as c:
        tasks = [{"subject": "Ship it", "acceptance": ["check:slow"]}]
        made = await c.call_tool("PlanCreate", {"title": "Ship", "analysis": "a", "approach": "b", "tasks": tasks})
        assert not made.is_error, text_of(made)
        await c.call_tool("TaskUpdate", {"taskId": 1, "status": "in_progress"})
        with anyio.fail_after(bound(30)):
            answer = await c.call_tool("TaskUpdate", {"taskId": 1, "status": "completed"})
        assert text_of(answer).startswith("Task #1 is being verified: check slow still runs"), text_of(answer)
        pid_file = checks.project / "slow.pid"
        wait_until(pid_file.exists, "the check to start")
        shell = int(pid_file.read_text())
        assert not _group_gone(shell)
        started = time.monotonic()
    # The client closed the server's stdin: the server stopped, and with it the check.
    wait_until(lambda: _group_gone(shell), "the check's process group to be gone", timeout=bound(15))
    assert time.monotonic() - started < bound(15)
    store = open_store(url)
    try:
        (name,) = store.active_plans()
        task = store.get_task(name, 1)
    finally:
        store.close()
    assert task.status.value == "in_progress"
    assert task.verification is not None and task.verification["state"] == "interrupted"
