"""stdio end to end: the seed's story across a server restart, in both protocol modes."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.support.mcp import connect, script_params, server_params, text_of
from tests.support.procs import child_env, run_cli, stop
from tests.support.seed import CHAIN, PLAN_NAME, SEED_ACTIVE_LINE, SEED_SUMMARY, SUBJECTS, plan_create_args

MODES = ["legacy", "auto"]


async def seed_story(client: Client) -> None:
    """Create the seed plan with its 4 tasks chained, finish two, start the third."""
    r = await client.call_tool("PlanCreate", plan_create_args(CHAIN))
    assert not r.is_error, text_of(r)
    assert r.structured_content["plan"]["name"] == PLAN_NAME
    assert r.structured_content["taskIds"] == [1, 2, 3, 4]

    # Bad input is a tool error, never the end of the process.
    bad = await client.call_tool("TaskUpdate", {"taskId": {"not": "an id"}, "status": "exploded"})
    assert bad.is_error
    bad = await client.call_tool("TaskUpdate", {"taskId": "#99", "status": "completed"})
    assert bad.is_error and "99" in text_of(bad)
    bad = await client.call_tool("NoSuchTool", {"x": 1})
    assert bad.is_error

    for task_id, status in [(1, "completed"), ("2", "completed"), ("#3", "in_progress")]:
        r = await client.call_tool("TaskUpdate", {"taskId": task_id, "status": status})
        assert not r.is_error, text_of(r)
        assert text_of(r).startswith(f"Updated task #{str(task_id).lstrip('#')} ")

    r = await client.call_tool("TaskList", {})
    assert not r.is_error, text_of(r)
    lines = text_of(r).splitlines()
    assert lines[0] == f"{PLAN_NAME} [2/4 done]"
    assert f"#3 [in_progress] {SUBJECTS[2]}" in lines
    assert f"#4 [pending] {SUBJECTS[3]} [blocked by #3]" in lines


async def assert_restored(client: Client) -> None:
    """What a fresh process shows an agent that lost its context."""
    assert client.instructions is not None
    assert "# Active Plans" in client.instructions
    assert SEED_ACTIVE_LINE in client.instructions.splitlines()
    active = await client.read_resource("plans://active")
    assert active.contents[0].text == f"# Active Plans\n{SEED_ACTIVE_LINE}"  # type: ignore[union-attr]
    r = await client.call_tool("PlanList", {})
    assert not r.is_error and SEED_ACTIVE_LINE[2:] in text_of(r)


@pytest.mark.parametrize("mode", MODES)
async def test_seed_story_survives_a_restart(mode: str, tmp_path: Path) -> None:
    root = tmp_path / "root"
    with anyio.fail_after(60):
        async with connect(server_params(root, tmp_path), tmp_path / "first.stderr", mode) as client:
            assert "# Active Plans\n(none)" in (client.instructions or "")
            await seed_story(client)
        first_err = (tmp_path / "first.stderr").read_text(encoding="utf-8")
        assert "[Session Plan] Active tasks:\n  (none)" in first_err
        assert "Traceback" not in first_err

        async with connect(server_params(root, tmp_path), tmp_path / "second.stderr", mode) as client:
            await assert_restored(client)
        second_err = (tmp_path / "second.stderr").read_text(encoding="utf-8")
        assert SEED_SUMMARY in second_err

    status = run_cli(["status", "--root", str(root)])
    assert status.returncode == 0, status.stderr
    assert status.stdout == SEED_SUMMARY + "\n"


async def test_console_script_serves_stdio(tmp_path: Path) -> None:
    root = tmp_path / "root"
    with anyio.fail_after(60):
        async with connect(script_params(root, tmp_path), tmp_path / "a.stderr", "auto") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"PlanCreate", "PlanList", "PlanArchive", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet",
                    "todo"} <= names
            await seed_story(client)
        async with connect(script_params(root, tmp_path), tmp_path / "b.stderr", "legacy") as client:
            await assert_restored(client)
    assert "[Session Plan] Active tasks:" in (tmp_path / "a.stderr").read_text(encoding="utf-8")
    assert SEED_SUMMARY in (tmp_path / "b.stderr").read_text(encoding="utf-8")


def _read_line(proc: subprocess.Popen[bytes], timeout: float = 15) -> bytes:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    buf = b""
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        assert left > 0, f"no answer on stdout within {timeout}s (got {buf!r})"
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if ready:
            chunk = proc.stdout.read1(65536) if hasattr(proc.stdout, "read1") else proc.stdout.read(1)  # type: ignore[attr-defined]
            assert chunk, f"stdout closed early (got {buf!r})"
            buf += chunk
    return buf


def test_stdout_carries_only_protocol(tmp_path: Path) -> None:
    """Raw JSON-RPC over the pipes: every byte on stdout is a JSON-RPC message; logs go to stderr."""
    root = tmp_path / "root"
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "TaskGet", "arguments": {"taskId": []}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "PlanCreate", "arguments": "garbage"}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "server", "--root", str(root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(), cwd=tmp_path,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        answers: dict[int, dict[str, Any]] = {}
        pending = b""
        for msg in messages:
            proc.stdin.write(json.dumps(msg).encode() + b"\n")
            proc.stdin.flush()
            if "id" not in msg:
                continue
            while msg["id"] not in answers:
                pending += _read_line(proc)
                *complete, pending = pending.split(b"\n")
                for line in complete:
                    parsed = json.loads(line)  # anything else on stdout breaks the client
                    assert parsed.get("jsonrpc") == "2.0"
                    if "id" in parsed:
                        answers[parsed["id"]] = parsed
        assert answers[1]["result"]["serverInfo"]["name"] == "planning-mcp"
        assert answers[2]["result"]["isError"] is True
        assert "error" in answers[3] or answers[3]["result"]["isError"] is True
        assert "PlanCreate" in {t["name"] for t in answers[4]["result"]["tools"]}
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
        rest = pending + proc.stdout.read()
        for line in rest.splitlines():
            assert json.loads(line).get("jsonrpc") == "2.0"
        assert proc.stderr is not None
        assert "[Session Plan] Active tasks:" in proc.stderr.read().decode("utf-8")
    finally:
        stop(proc)
