"""Event hooks (planning_core.events): TaskCreated after the write, TaskCompleted
before it, outside the lock; failures and hangs never lose or corrupt data."""

from __future__ import annotations

import json
import logging
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from planning_core import Planner, Session, TaskStatus
from planning_core.actions import Actions
from planning_core.caller import NOBODY, Caller
from planning_core.errors import CompletionRefused
from planning_core.events import EventHooks, HookConfigError, parse_config
from planning_core.stores.files import FileStore
from server.cli import main as cli_main
from server.mcp.app import build_server
from tests.support.mcp import text_of
from tests.support.procs import gone, wait_until
from tests.support.seed import PLAN_NAME
from tests.support.waits import bound


def hooks(config: dict[str, Any]) -> EventHooks:
    return EventHooks(parse_config(config))


def actions(root: Path, config: dict[str, Any], lock_timeout: float = 10) -> Actions:
    return Actions(Planner(FileStore(root, lock_timeout=lock_timeout)), hooks(config))


def status(root: Path, task_id: int) -> TaskStatus:
    return FileStore(root).get_task(PLAN_NAME, task_id).status


def test_task_completed_exit_2_refuses_with_its_stderr(root: Path, seeded: str, tmp_path: Path) -> None:
    seen = tmp_path / "payload.json"
    cmd = f"cat > {seen}; echo 'FAILED tests/test_login.py::test_bad_password' >&2; exit 2"
    a = actions(root, {"TaskCompleted": [{"command": cmd, "timeout": 10}]})
    before = (root / "todo" / PLAN_NAME / "task_3.json").read_bytes()
    with pytest.raises(CompletionRefused) as e:
        a.task_update(Caller(NOBODY, Session()), 3, status="completed")
    assert "FAILED tests/test_login.py::test_bad_password" in str(e.value)
    assert "#3" in str(e.value) and "not marked completed" in str(e.value)
    assert (root / "todo" / PLAN_NAME / "task_3.json").read_bytes() == before  # untouched
    payload = json.loads(seen.read_text())
    assert payload == {
        "event": "TaskCompleted",
        "plan": PLAN_NAME,
        "plan_dir": str(root.absolute() / "todo" / PLAN_NAME),
        "root": str(root.absolute()),
        "task_id": 3,
        "task_subject": "Add login endpoint",
        "task_description": "POST /login",
        "owner": "alice",
    }


def test_task_completed_exit_0_allows_and_env_is_set(root: Path, seeded: str, tmp_path: Path) -> None:
    seen = tmp_path / "env.txt"
    cmd = f'echo "$PLANNING_MCP_EVENT $PLANNING_MCP_PLAN $PLANNING_MCP_TASK_ID" > {seen}; echo noise'
    out = actions(root, {"TaskCompleted": [{"command": cmd}]}).task_update(
        Caller(NOBODY, Session()), "#3", status="completed"
    )
    assert out.text.startswith("Updated task #3 status")
    assert status(root, 3) is TaskStatus.COMPLETED
    assert seen.read_text().split() == ["TaskCompleted", PLAN_NAME, "3"]


def test_refusal_message_falls_back_to_stdout(root: Path, seeded: str) -> None:
    a = actions(root, {"TaskCompleted": [{"command": "echo '2 failed, 10 passed'; exit 2"}]})
    with pytest.raises(CompletionRefused, match="2 failed, 10 passed"):
        a.task_update(Caller(NOBODY, Session()), 3, status="completed")


def test_task_completed_crash_allows_and_logs(root: Path, seeded: str, caplog: pytest.LogCaptureFixture) -> None:
    a = actions(root, {"TaskCompleted": [{"command": "echo 'boom' >&2; exit 1"}, {"command": "no-such-cmd-xyz"}]})
    with caplog.at_level(logging.WARNING):
        a.task_update(Caller(NOBODY, Session()), 3, status="completed")
    assert status(root, 3) is TaskStatus.COMPLETED
    assert "exited 1" in caplog.text and "boom" in caplog.text and "completion allowed" in caplog.text


def test_task_completed_timeout_refuses_and_kills_the_whole_group(root: Path, seeded: str, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    cmd = f"sleep 30 & echo $! > {pid_file}; wait"
    a = actions(root, {"TaskCompleted": [{"command": cmd, "timeout": 0.5}]})
    started = time.monotonic()
    with pytest.raises(CompletionRefused, match=r"did not finish within 0.5s and was stopped"):
        a.task_update(Caller(NOBODY, Session()), 3, status="completed")
    assert time.monotonic() - started < bound(5)
    assert status(root, 3) is TaskStatus.IN_PROGRESS
    child = int(pid_file.read_text())
    assert gone(child, within=bound(3)), "the hook's background child survived the timeout"


def test_no_hook_when_not_completing_or_already_completed(root: Path, seeded: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    a = actions(root, {"TaskCompleted": [{"command": f"touch {marker}; exit 2"}]})
    a.task_update(Caller(NOBODY, Session()), 4, subject="Add logout endpoint (all devices)")
    a.task_update(Caller(NOBODY, Session()), 1, status="completed")  # already completed: nothing to check
    a.task_update(Caller(NOBODY, Session()), 4, status="in_progress")
    assert not marker.exists()


def test_hook_runs_outside_the_plan_lock(root: Path, seeded: str, tmp_path: Path) -> None:
    """While a slow TaskCompleted check runs, another writer of the same plan is not blocked."""
    started, go = tmp_path / "started", tmp_path / "go"
    cmd = f"touch {started}; while [ ! -e {go} ]; do sleep 0.05; done"
    a = actions(root, {"TaskCompleted": [{"command": cmd, "timeout": 20}]})
    result: list[Any] = []
    worker = threading.Thread(
        target=lambda: result.append(a.task_update(Caller(NOBODY, Session()), 3, status="completed"))
    )
    worker.start()
    try:
        wait_until(started.exists, "the TaskCompleted hook started")  # the handshake: the check is running
        other = Planner(FileStore(root, lock_timeout=1))  # would raise PlanBusy if the lock were held
        other.update_task(PLAN_NAME, 4, owner="bob")
    finally:
        go.touch()
        worker.join(bound(20))
    assert result and status(root, 3) is TaskStatus.COMPLETED
    assert FileStore(root).get_task(PLAN_NAME, 4).owner == "bob"


def test_task_created_runs_after_the_write_and_failures_lose_nothing(
    root: Path, seeded: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log_file = tmp_path / "created.jsonl"
    a = actions(
        root,
        {
            "TaskCreated": [
                {"command": f"cat >> {log_file}; echo >> {log_file}; ls {root}/todo/$PLANNING_MCP_PLAN >&2"},
                {"command": "exit 1"},
                {"command": "sleep 5", "timeout": 0.3},
            ]
        },
    )
    with caplog.at_level(logging.WARNING):
        out = a.task_create(Caller(NOBODY, Session()), "Rate-limit login", "5 per minute", plan=PLAN_NAME)
    assert out.text == "Task #5 created successfully: Rate-limit login"
    assert FileStore(root).get_task(PLAN_NAME, 5).subject == "Rate-limit login"
    assert json.loads(log_file.read_text())["task_id"] == 5
    assert "exited 1" in caplog.text and "timed out" in caplog.text


def test_plan_create_fires_task_created_per_task(root: Path, tmp_path: Path) -> None:
    log_file = tmp_path / "created.txt"
    FileStore(root).ensure_writable()
    a = actions(root, {"TaskCreated": [{"command": f'echo "$PLANNING_MCP_TASK_ID" >> {log_file}'}]})
    a.plan_create(
        Caller(NOBODY, Session()), "T", tasks=[{"subject": "a", "description": ""}, {"subject": "b", "description": ""}]
    )
    assert log_file.read_text().split() == ["1", "2"]


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ([], "expected an object"),
        ({"TaskDone": []}, "unknown event 'TaskDone'"),
        ({"TaskCompleted": [{"cmd": "x"}]}, 'needs a non-empty "command"'),
        ({"TaskCompleted": [{"command": "x", "timeout": 0}]}, "timeout 0"),
        ({"TaskCompleted": "x"}, "must be a list"),
    ],
)
def test_bad_config_is_one_actionable_line(config: Any, words: str) -> None:
    with pytest.raises(HookConfigError, match=words) as e:
        parse_config(config, "hooks.json")
    assert "\n" not in str(e.value)


def test_config_file_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "hooks.json"
    f.write_text(json.dumps({"TaskCompleted": [{"command": "true", "timeout": 5}], "TaskCreated": ["true"]}))
    loaded = EventHooks.load(str(f))
    assert loaded is not None and loaded.has("TaskCompleted") and loaded.commands["TaskCompleted"][0].timeout == 5
    monkeypatch.setenv("PLANNING_MCP_HOOKS", str(f))
    assert EventHooks.load(None) is not None
    monkeypatch.delenv("PLANNING_MCP_HOOKS")
    assert EventHooks.load(None) is None
    with pytest.raises(HookConfigError, match="does not exist"):
        EventHooks.load(str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(HookConfigError, match="not valid JSON"):
        EventHooks.load(str(tmp_path / "bad.json"))


def test_cli_refuses_a_bad_hooks_file_in_one_line(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.json").write_text('{"TaskDone": []}')
    assert cli_main(["--root", str(root), "--hooks", str(tmp_path / "bad.json")]) == 2
    assert cli_main(["serve", "--root", str(root), "--hooks", str(tmp_path / "nope.json")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and "unknown event 'TaskDone'" in lines[0] and "does not exist" in lines[1]


async def test_refusal_reaches_the_client_as_a_tool_error(root: Path, seeded: str) -> None:
    h = hooks({"TaskCompleted": [{"command": "echo 'coverage 61% < 80%' >&2; exit 2"}]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        async with Client(build_server(root, hooks=h)) as c:  # type: ignore[arg-type]
            r = await c.call_tool("TaskUpdate", {"taskId": 3, "status": "completed"})
            assert r.is_error
            assert "coverage 61% < 80%" in text_of(r)
            r = await c.call_tool("TaskGet", {"taskId": 3})
            assert "Status: in_progress" in text_of(r)
