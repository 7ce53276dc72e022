"""Promise: nothing in a plan folder can freeze the server or the CLI, or stall other
requests. A FIFO (or directory, or socket) where a task file, plan.md, .highwatermark
or .lock should be is reported by name, like any damaged file, and never opened for a
blocking read; a task file far over the contract's bounds is reported as unreadable
after reading at most the bound. Checked through the real CLI and a real stdio server,
with real FIFOs made by os.mkfifo; every wait is bounded, so a freeze fails the test."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from planning_core.stores.files.taskfiles import MAX_TASK_FILE_BYTES
from tests.support.mcp import text_of
from tests.support.procs import child_env, console_script, run_cli, serving
from tests.support.raw_stdio import RawStdio
from tests.support.seed import make_plan
from tests.support.waits import bound

PLAN = "2026-05-28-fifo"
PROMPT = 2.0  # seconds: far longer than any of these answers takes, far shorter than a hang
HUGE = 100 * 1024 * 1024
FIGURES: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def report_figures() -> Iterator[None]:
    """Print the figures the tests measured once they have all run (shown with -s): a
    fixture, not a last test, so it neither depends on test order nor passes without checking anything."""
    yield
    for k, v in FIGURES.items():
        print(f"{k}: {v:.4f}")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    make_plan(r, "fifo", [{"subject": f"Task {i}"} for i in range(1, 5)], title="Fifo plan", analysis="a", approach="b")
    return r


def folder(root: Path) -> Path:
    return root / "todo" / PLAN


@pytest.fixture
def server(root: Path, tmp_path: Path) -> Iterator[RawStdio]:
    os.mkfifo(folder(root) / "task_5.json")
    srv = RawStdio(root, tmp_path / "stdio.stderr")
    try:
        srv.initialize()  # start-up (summary, repair) reads every task file: must not hang
        yield srv
    finally:
        srv.close()


def timed(fn: object, *args: object) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn(*args)  # type: ignore[operator]
    return time.perf_counter() - start, out


# -- the CLI -----------------------------------------------------------------------


@pytest.mark.parametrize("command", [["status"], ["status", "--json"], ["board"], ["board", "--json"], ["graph"]])
def test_cli_views_name_a_fifo_task_file(root: Path, command: list[str]) -> None:
    os.mkfifo(folder(root) / "task_5.json")
    seconds, done = timed(run_cli, [*command, "--root", str(root)])
    out = done.stdout  # type: ignore[attr-defined]
    assert done.returncode == 0, done  # type: ignore[attr-defined]
    assert "task_5.json" in out
    if command[0] != "graph":
        assert "FIFO" in out
    assert seconds < bound(10)
    FIGURES[f"cli {' '.join(command)} with a FIFO task file (s)"] = seconds


@pytest.mark.parametrize("name", ["plan.md", ".highwatermark", ".lock"])
def test_cli_views_survive_a_fifo_plan_file(root: Path, name: str) -> None:
    target = folder(root) / name
    target.unlink()
    os.mkfifo(target)
    for command in (["status"], ["board"], ["graph"]):
        done = run_cli([*command, "--root", str(root)])
        assert done.returncode == 0, done
        assert "Task 4" in done.stdout


def test_hook_state_fifo_does_not_hang(root: Path) -> None:
    (root / ".hooks").mkdir()
    os.mkfifo(root / ".hooks" / "s1.json")
    payload = json.dumps({"session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Bash", "cwd": str(root)})
    done = subprocess.run(
        [console_script(), "hook", "PostToolUse", "--root", str(root)],
        input=payload,
        capture_output=True,
        text=True,
        timeout=bound(20),
        env=child_env(),
    )
    assert done.returncode == 0  # fails open, promptly


# -- the stdio server --------------------------------------------------------------


def test_server_starts_and_names_the_fifo(server: RawStdio) -> None:
    seconds, result = timed(server.call, "TaskGet", {"taskId": 5, "plan": PLAN}, PROMPT)
    assert result["isError"] is True  # type: ignore[index]
    text = text_of(result)  # type: ignore[arg-type]
    assert "task_5.json" in text and "FIFO (named pipe), not a regular file" in text
    FIGURES["stdio TaskGet of a FIFO task file (s)"] = seconds
    listed = server.call("TaskList", {"plan": PLAN}, PROMPT)
    assert "#5 [unreadable] task_5.json: it is a FIFO (named pipe), not a regular file" in text_of(listed)
    assert "task_5.json" in server.stderr()  # the start-up summary names it too


def test_other_requests_are_answered_next_to_a_fifo(server: RawStdio) -> None:
    """Pipelined: a TaskGet of the FIFO and reads and writes of other tasks, all at once."""
    start = time.perf_counter()
    ids = [server.request("tools/call", {"name": "TaskGet", "arguments": {"taskId": 5, "plan": PLAN}})]
    ids.append(server.request("tools/call", {"name": "TaskGet", "arguments": {"taskId": 1, "plan": PLAN}}))
    ids.append(
        server.request(
            "tools/call",
            {"name": "TaskCreate", "arguments": {"subject": "After the FIFO", "description": "", "plan": PLAN}},
        )
    )
    ids.append(server.request("tools/call", {"name": "TaskList", "arguments": {"plan": PLAN}}))
    answers = [server.answer(i, PROMPT) for i in ids]
    FIGURES["stdio 4 pipelined calls next to a FIFO (s)"] = time.perf_counter() - start
    assert "Task #1: Task 1" in text_of(answers[1]["result"])
    assert "Task #6 created successfully" in text_of(answers[2]["result"])  # 5 is taken by the FIFO
    assert "#5 [unreadable] task_5.json" in text_of(answers[3]["result"])  # ran alongside the create
    assert "#6 [pending] After the FIFO" in text_of(server.call("TaskList", {"plan": PLAN}, PROMPT))


@pytest.mark.parametrize("name", [".highwatermark", "plan.md"])
def test_fifo_plan_files_do_not_freeze_writes_or_reads(root: Path, tmp_path: Path, name: str) -> None:
    target = folder(root) / name
    target.unlink()
    os.mkfifo(target)
    srv = RawStdio(root, tmp_path / "stdio.stderr")
    try:
        srv.initialize()
        created = srv.call("TaskCreate", {"subject": "Still works", "description": "", "plan": PLAN}, PROMPT)
        assert "Task #5 created successfully" in text_of(created)  # the ids on disk decide
        read = srv.answer(srv.request("resources/read", {"uri": f"plans://{PLAN}"}), PROMPT)
        body = read["result"]["contents"][0]["text"]
        assert "#5 [pending] Still works" in body
        if name == "plan.md":
            assert "plan.md cannot be read: it is a FIFO (named pipe), not a regular file" in body
    finally:
        srv.close()


def test_fifo_lock_refuses_writes_promptly(root: Path, tmp_path: Path) -> None:
    lock = folder(root) / ".lock"
    lock.unlink()
    os.mkfifo(lock)
    srv = RawStdio(root, tmp_path / "stdio.stderr")
    try:
        srv.initialize()
        seconds, result = timed(srv.call, "TaskCreate", {"subject": "x", "description": "", "plan": PLAN}, PROMPT)
        assert result["isError"] is True  # type: ignore[index]
        assert ".lock" in text_of(result) and "FIFO" in text_of(result)  # type: ignore[arg-type]
        assert "Task 1" in text_of(srv.call("TaskGet", {"taskId": 1, "plan": PLAN}, PROMPT))
        FIGURES["stdio TaskCreate refused over a FIFO .lock (s)"] = seconds
    finally:
        srv.close()
    assert not (folder(root) / "task_5.json").exists()


def test_socket_and_directory_task_files_are_named(root: Path) -> None:
    (folder(root) / "task_7.json").mkdir()
    sock = socket.socket(socket.AF_UNIX)
    try:
        # A relative name from inside the folder: a full temp path can exceed AF_UNIX's 108 bytes.
        here = os.getcwd()
        os.chdir(folder(root))
        try:
            sock.bind("task_8.json")
        finally:
            os.chdir(here)
        out = run_cli(["board", "--root", str(root)]).stdout
    finally:
        sock.close()
    assert "#7 [unreadable] task_7.json: it is a directory, not a regular file" in out
    assert "#8 [unreadable] task_8.json: it is a socket, not a regular file" in out


async def test_http_server_names_the_fifo(root: Path, tmp_path: Path) -> None:
    os.mkfifo(folder(root) / "task_5.json")
    with serving(tmp_path, "http", root=root) as srv, anyio.fail_after(bound(30)):
        async with Client(f"{srv.base}/mcp") as client:
            with anyio.fail_after(PROMPT * 2):
                got = await client.call_tool("TaskGet", {"taskId": 5, "plan": PLAN})
                listed = await client.call_tool("TaskList", {"plan": PLAN})
    assert got.is_error and "FIFO (named pipe)" in got.content[0].text  # type: ignore[union-attr]
    assert "#5 [unreadable] task_5.json" in listed.content[0].text  # type: ignore[union-attr]


# -- a huge task file ----------------------------------------------------------------


def test_huge_task_file_is_reported_quickly(root: Path, tmp_path: Path) -> None:
    with open(folder(root) / "task_6.json", "wb") as f:
        f.truncate(HUGE)  # sparse: 100 MB to read, no disk used
    srv = RawStdio(root, tmp_path / "stdio.stderr")
    try:
        srv.initialize()
        seconds, result = timed(srv.call, "TaskGet", {"taskId": 6, "plan": PLAN}, PROMPT)
        text = text_of(result)  # type: ignore[arg-type]
        assert result["isError"] is True  # type: ignore[index]
        assert f"it is {HUGE:,} bytes; a task file is at most {MAX_TASK_FILE_BYTES:,} bytes" in text
        FIGURES["stdio TaskGet of a 100 MB task file (s)"] = seconds
        seconds, listed = timed(srv.call, "TaskList", {"plan": PLAN}, PROMPT)
        assert "#6 [unreadable] task_6.json" in text_of(listed)  # type: ignore[arg-type]
        FIGURES["stdio TaskList with a 100 MB task file (s)"] = seconds
    finally:
        srv.close()
    assert seconds < PROMPT
