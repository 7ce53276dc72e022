"""Checks over MCP on every store (files, memory, PostgreSQL), with real commands: a task whose
acceptance names `check:NAME` is completed only when the command the user defined in
checks.toml (and trusted) passes in the project folder. A failure refuses the completion with
the command, its exit and its output's tail, and changes nothing but the task's record of the
run (its history); an undefined name, an unreadable or untrusted check file, a command that
never ends are each answered clearly and in time; a check that outlasts a 10 s client timeout
is answered in time and completes in the background."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import Implementation

from planning_core.store import PlanFolders, PlanStore
from planning_core.verify import ANSWER_WITHIN, MAX_CHECK_FILE_BYTES, SHOWN_CHARS, SHOWN_LINES, CheckFile
from tests.support.mcp import text_of
from tests.support.procs import gone
from tests.support.waits import bound

CLAUDE_CODE = Implementation(name="claude-code", title="Claude Code", version="2.1.197")
AUTO = pytest.mark.parametrize("mode", ["auto"], indirect=True)
CHECKS = """
[checks.tests]
command = "test -f src.txt && echo all 3 passed"
timeout = 30

[checks.failing]
command = "echo line-1; echo 'assert 1 == 2' >&2; exit 3"

[checks.endless]
command = "echo $$ > endless.pid; sleep 1000"
timeout = 2

[checks.chatty]
command = "yes 'a line of output' | head -n 200000; echo the-last-line; exit 1"

[checks.slow]
command = "echo started > slow.started; while [ ! -f slow.go ]; do sleep 0.1; done; echo done"
timeout = 300
"""


def check_file(store: PlanStore) -> CheckFile:
    """The check file the server reads for this store (as app.build_server finds it)."""
    return CheckFile.of_root(store.root if isinstance(store, PlanFolders) else None)


@pytest.fixture
def checks(store: PlanStore) -> CheckFile:
    """checks.toml with CHECKS, trusted, and the project's src.txt that `tests` looks for."""
    found = check_file(store)
    found.path.parent.mkdir(parents=True, exist_ok=True)
    found.path.write_text(CHECKS)
    (found.project / "src.txt").write_text("x")
    found.trust()
    return found


async def _plan(c: Client, *criteria: str) -> None:
    tasks = [{"subject": "Add login", "acceptance": ["returns 401", *criteria]}, {"subject": "Docs"}]
    result = await c.call_tool("PlanCreate", {"title": "Auth", "analysis": "a", "approach": "b", "tasks": tasks})
    assert not result.is_error, text_of(result)
    started = await c.call_tool("TaskUpdate", {"taskId": 1, "status": "in_progress", "owner": "alice"})
    assert not started.is_error, text_of(started)


async def _task(c: Client, task_id: int = 1) -> dict[str, Any]:
    got = await c.call_tool("TaskGet", {"taskId": task_id})
    assert not got.is_error, text_of(got)
    task = got.structured_content["task"]  # type: ignore[index]
    assert isinstance(task, dict)
    return task


async def _complete(c: Client, **kwargs: Any) -> Any:
    with anyio.fail_after(bound(20)):
        return await c.call_tool("TaskUpdate", {"taskId": 1, "status": "completed"}, **kwargs)


@AUTO
async def test_a_passing_check_completes_the_task_and_records_the_run(connect: Any, checks: CheckFile) -> None:
    async with connect() as c:
        await _plan(c, "check:tests")
        done = await _complete(c)
        assert not done.is_error, text_of(done)
        assert text_of(done).startswith("Updated task #1 status")
        task = await _task(c)
        assert task["status"] == "completed"
        assert task["verification"]["state"] == "passed" and task["verification"]["checks"] == ["tests"]
        shown = text_of(await c.call_tool("TaskGet", {"taskId": 1}))
        assert "Checks: tests: passed" in shown


@AUTO
async def test_a_failing_check_refuses_the_completion_and_changes_only_the_record(
    connect: Any, checks: CheckFile
) -> None:
    async with connect() as c:
        await _plan(c, "check:failing")
        before = await _task(c)
        refused = await _complete(c)
        assert refused.is_error
        said = text_of(refused)
        assert "Task #1 was not completed: check failing" in said
        assert "exit 3" in said and "line-1" in said and "assert 1 == 2" in said
        assert "echo line-1" in said  # the command
        after = await _task(c)
    record = after.pop("verification")
    assert record["state"] == "failed" and record["result"] == "exit 3" and "assert 1 == 2" in record["output"]
    assert {k: v for k, v in after.items() if k != "updatedAt"} == {k: v for k, v in before.items() if k != "updatedAt"}
    assert after["status"] == "in_progress"
    async with connect() as c:
        shown = text_of(await c.call_tool("TaskGet", {"taskId": 1}))
    assert "checks failing: failing failed (exit 3)" in shown  # the run, in the task's last changes
    async with connect() as c:
        listed = text_of(await c.call_tool("TaskList", {}))
    assert "#1 [in_progress] Add login (alice) (checks failed)" in listed
    assert "checks failing: running until" in shown


@AUTO
async def test_an_undefined_check_is_refused_naming_the_defined_ones(connect: Any, checks: CheckFile) -> None:
    async with connect() as c:
        await _plan(c)
        made = await c.call_tool("TaskCreate", {"subject": "s", "description": "d", "acceptance": ["check:rm-rf"]})
        assert made.is_error
        assert "Unknown check rm-rf" in text_of(made)
        assert "defines chatty, endless, failing, slow, tests" in text_of(made)
        tasks = [
            {"subject": "s", "acceptance": ["check:tests", "check:rm -rf /"]},
            {"subject": "t", "acceptance": ["check:x"]},
        ]
        planned = await c.call_tool("PlanCreate", {"title": "T", "analysis": "a", "approach": "b", "tasks": tasks})
        assert planned.is_error and "Unknown check x" in text_of(planned)
        patched = await c.call_tool("TaskUpdate", {"taskId": 1, "acceptance": ["check:nope"]})
        assert patched.is_error and "Unknown check nope" in text_of(patched)
        assert (await _task(c)).get("acceptance") == ["returns 401"]
        # Defined when the task was written, gone from the file since: refused when it would run.
        await c.call_tool("TaskUpdate", {"taskId": 1, "acceptance": ["check:tests"]})
        checks.path.write_text('[checks.lint]\ncommand = "true"\n')
        refused = await _complete(c)
        assert refused.is_error and "Unknown check tests" in text_of(refused) and "defines lint" in text_of(refused)
        assert (await _task(c))["status"] == "in_progress"


@AUTO
async def test_a_check_file_nobody_trusted_runs_nothing(connect: Any, checks: CheckFile) -> None:
    checks.path.write_text(CHECKS.replace("echo all 3 passed", "touch ran.txt"))
    async with connect() as c:
        await _plan(c, "check:tests")
        refused = await _complete(c)
        assert (
            refused.is_error and "not trusted" in text_of(refused) and "planning-mcp checks trust" in text_of(refused)
        )
        assert not (checks.project / "ran.txt").exists()
        checks.trust()
        done = await _complete(c)
        assert not done.is_error, text_of(done)
        assert (checks.project / "ran.txt").exists()


@AUTO
@pytest.mark.parametrize("kind", ["fifo", "symlink out of the root", "huge", "bad toml"])
async def test_a_bad_check_file_is_answered_clearly_and_in_time(
    connect: Any, checks: CheckFile, tmp_path: Path, kind: str
) -> None:
    checks.path.unlink()
    if kind == "fifo":
        os.mkfifo(checks.path)
        expected = "FIFO"
    elif kind == "symlink out of the root":
        outside = tmp_path / "elsewhere.toml"
        outside.write_text(CHECKS)
        checks.path.symlink_to(outside)
        expected = "symbolic link"
    elif kind == "huge":
        checks.path.write_text(CHECKS + "#" * MAX_CHECK_FILE_BYTES)
        expected = f"at most {MAX_CHECK_FILE_BYTES:,} bytes"
    else:
        checks.path.write_text("[checks.tests\ncommand = 'true'\n")
        expected = "not valid TOML"
    async with connect() as c:
        await _plan(c)
        made = await c.call_tool("TaskCreate", {"subject": "s", "description": "d", "acceptance": ["check:tests"]})
        assert made.is_error and expected in text_of(made), text_of(made)
        await c.call_tool("TaskCreate", {"subject": "plain", "description": "d", "acceptance": ["no check here"]})
        refused = await c.call_tool("TaskUpdate", {"taskId": 1, "acceptance": ["check:tests"]})
        assert refused.is_error and expected in text_of(refused)
        # A task naming no check completes as ever, whatever the check file is.
        plain = await c.call_tool("TaskUpdate", {"taskId": 1, "status": "completed"})
        assert not plain.is_error, text_of(plain)


@AUTO
async def test_a_command_that_never_ends_is_stopped_with_everything_it_started(connect: Any, checks: CheckFile) -> None:
    async with connect() as c:
        await _plan(c, "check:endless")
        started = time.monotonic()
        refused = await _complete(c)
        assert refused.is_error
        assert "timed out after 2 s and was stopped" in text_of(refused)
        assert time.monotonic() - started < ANSWER_WITHIN + bound(5)
        assert (await _task(c))["status"] == "in_progress"
    shell = int((checks.project / "endless.pid").read_text())
    assert gone(shell, group=True)  # the shell's group, its sleep included (once reaped)


@AUTO
async def test_a_check_outlasting_a_10s_client_timeout_completes_in_the_background(
    connect: Any, checks: CheckFile
) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def seen(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with connect() as c:
        await _plan(c, "check:tests", "check:slow")
        asked = time.monotonic()
        answer = await c.call_tool(
            "TaskUpdate", {"taskId": 1, "status": "completed"}, read_timeout_seconds=10, progress_callback=seen
        )
        assert not answer.is_error, text_of(answer)
        assert text_of(answer).startswith("Task #1 is being verified: check slow still runs")
        assert progress and all(m == "running slow" or m == "running tests" for _, _, m in progress)
        task = await _task(c)
        assert task["status"] == "in_progress" and task["verification"]["state"] == "running"
        assert "#1 [in_progress] Add login (alice) (checks running)" in text_of(await c.call_tool("TaskList", {}))
        again = await c.call_tool("TaskUpdate", {"taskId": 1, "status": "completed"}, read_timeout_seconds=10)
        assert text_of(again).startswith("Task #1 is being verified")  # one run, not two
        assert (checks.project / "slow.started").exists()
        # The check outlasts the client's 10 s timeout, then finishes.
        await anyio.sleep(max(0.0, 10.5 - (time.monotonic() - asked)))
        (checks.project / "slow.go").write_text("")
        with anyio.fail_after(bound(20)):
            while (task := await _task(c))["status"] != "completed":
                await anyio.sleep(0.1)
        assert task["verification"]["state"] == "passed"
        assert task["verification"]["checks"] == ["tests", "slow"]


async def test_the_instructions_name_the_checks_a_task_may_name(connect: Any, checks: CheckFile) -> None:
    line = (
        "Checks a task's acceptance may name (`check:NAME`; run before it completes): "
        "chatty, endless, failing, slow, tests."
    )
    async with connect() as c:
        assert line in (c.instructions or "")
    async with connect(client_info=CLAUDE_CODE) as c:
        assert (c.instructions or "").endswith(line)
    checks.path.unlink()
    async with connect() as c:
        assert "check:NAME" not in (c.instructions or "")


@AUTO
async def test_a_check_that_prints_megabytes_shows_its_last_lines_only(connect: Any, checks: CheckFile) -> None:
    async with connect() as c:
        await _plan(c, "check:chatty")
        refused = await _complete(c)
        said = text_of(refused)
        assert refused.is_error and "exit 1" in said and said.count("\n") < SHOWN_LINES + 5
        assert "a line of output\nthe-last-line\nFix what it reports" in said
        record = (await _task(c))["verification"]
    assert record["output"].endswith("the-last-line") and len(record["output"]) <= SHOWN_CHARS + 1
