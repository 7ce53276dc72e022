"""stdio end to end: the seed's story across a server restart, in both protocol modes, on
every store a server child can be given (store_url: files, postgres)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.support.mcp import connect, text_of
from tests.support.procs import child_env, run_cli
from tests.support.raw_stdio import RawStdio
from tests.support.seed import CHAIN, PLAN_NAME, SEED_ACTIVE_LINE, SEED_SUMMARY, SUBJECTS, plan_create_args
from tests.support.store_urls import stdio_params
from tests.support.waits import bound

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
async def test_seed_story_survives_a_restart(mode: str, store_url: str, tmp_path: Path) -> None:
    with anyio.fail_after(bound(60)):
        async with connect(stdio_params(store_url, tmp_path), tmp_path / "first.stderr", mode) as client:
            assert "# Active Plans\n(none)" in (client.instructions or "")
            await seed_story(client)
        first_err = (tmp_path / "first.stderr").read_text(encoding="utf-8")
        assert "[Session Plan] Active tasks:\n  (none)" in first_err
        assert "Traceback" not in first_err

        async with connect(stdio_params(store_url, tmp_path), tmp_path / "second.stderr", mode) as client:
            await assert_restored(client)
        second_err = (tmp_path / "second.stderr").read_text(encoding="utf-8")
        assert SEED_SUMMARY in second_err

    status = run_cli(["status", "--store", store_url])
    assert status.returncode == 0, status.stderr
    assert status.stdout == SEED_SUMMARY + "\n"


async def test_console_script_serves_stdio(store_url: str, tmp_path: Path) -> None:
    with anyio.fail_after(bound(60)):
        async with connect(stdio_params(store_url, tmp_path, script=True), tmp_path / "a.stderr", "auto") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {
                "PlanCreate",
                "PlanList",
                "PlanArchive",
                "TaskCreate",
                "TaskUpdate",
                "TaskList",
                "TaskGet",
                "todo",
            } <= names
            await seed_story(client)
        async with connect(stdio_params(store_url, tmp_path, script=True), tmp_path / "b.stderr", "legacy") as client:
            await assert_restored(client)
    assert "[Session Plan] Active tasks:" in (tmp_path / "a.stderr").read_text(encoding="utf-8")
    assert SEED_SUMMARY in (tmp_path / "b.stderr").read_text(encoding="utf-8")


async def test_a_misspelled_argument_is_refused_and_changes_nothing(store_url: str, tmp_path: Path) -> None:
    """`stauts` was ignored: "Updated task #1 (nothing changed)"; `ownr` claimed a task for nobody."""
    with anyio.fail_after(60):
        async with connect(stdio_params(store_url, tmp_path), tmp_path / "a.stderr", "auto") as client:
            assert not (await client.call_tool("PlanCreate", plan_create_args(CHAIN))).is_error
            for misspelled, meant in (
                ({"stauts": "completed"}, "status"),
                ({"status": "in_progress", "ownr": "bob"}, "owner"),
            ):
                r = await client.call_tool("TaskUpdate", {"taskId": 1, **misspelled})
                assert r.is_error
                wrong = next(key for key in misspelled if key != "status")
                assert f"{wrong}: unknown argument (did you mean {meant}?)" in text_of(r), text_of(r)
            task = text_of(await client.call_tool("TaskGet", {"taskId": 1}))
            assert "Status: pending" in task.splitlines(), task
            assert "bob" not in task


def test_stdout_carries_only_protocol(tmp_path: Path) -> None:
    """Raw JSON-RPC over the pipes: every byte on stdout is a JSON-RPC message (the raw
    client fails on any other line); logs go to stderr."""
    srv = RawStdio(tmp_path / "root", tmp_path / "raw.stderr", cwd=tmp_path)
    try:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        initialized = srv.answer(srv.request("initialize", init))
        srv.send_text('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        bad_id = srv.answer(srv.request("tools/call", {"name": "TaskGet", "arguments": {"taskId": []}}))
        garbage = srv.answer(srv.request("tools/call", {"name": "PlanCreate", "arguments": "garbage"}))
        tools = srv.answer(srv.request("tools/list"))
        assert initialized["result"]["serverInfo"]["name"] == "planning-mcp"
        assert bad_id["result"]["isError"] is True
        assert "error" in garbage or garbage["result"]["isError"] is True
        assert "PlanCreate" in {t["name"] for t in tools["result"]["tools"]}
        assert srv.proc.stdin is not None and srv.proc.stdout is not None
        srv.proc.stdin.close()
        assert srv.proc.wait(timeout=bound(10)) == 0
        rest = srv.pending + srv.proc.stdout.read()
        for line in rest.splitlines():
            assert json.loads(line).get("jsonrpc") == "2.0"
        assert "[Session Plan] Active tasks:" in srv.stderr()
    finally:
        srv.close()


# -- what stdin and stdout may be: a pipe, a socket, a file ----------------------------------

WIRE_REQUESTS = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "wire", "version": "0"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "PlanCreate",
            "arguments": {
                "title": "Wire",
                "analysis": "a",
                "approach": "b",
                "tasks": [{"subject": "over the wire", "description": "d"}],
            },
        },
    },
    {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},  # requests run at once: no order between 2 and 3
]
WIRE_INPUT = b"".join(json.dumps(m).encode() + b"\n" for m in WIRE_REQUESTS)


def assert_wire_answered(output: bytes) -> None:
    answers = {m["id"]: m for m in map(json.loads, output.splitlines()) if "id" in m}
    assert sorted(answers) == [1, 2, 3], output[:2000]
    assert answers[1]["result"]["serverInfo"]["name"] == "planning-mcp"
    assert answers[2]["result"]["content"][0]["text"].startswith("Created plan "), answers[2]
    assert "TaskGet" in {t["name"] for t in answers[3]["result"]["tools"]}


def serve_wire(tmp_path: Path, stdin: Any, stdout: Any) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "server", "--root", str(tmp_path / "root")]
    err = (tmp_path / "wire.stderr").open("wb")
    return subprocess.Popen(args, stdin=stdin, stdout=stdout, stderr=err, env=child_env(), cwd=tmp_path)


def test_requests_in_a_file_are_answered_into_a_file(tmp_path: Path) -> None:
    """`planning-mcp < requests > answers`: regular files cannot be waited on by the event
    loop, so they are read and written by the blocking threads; every request is answered
    and the end of the file ends serving."""
    (tmp_path / "requests.jsonl").write_bytes(WIRE_INPUT)
    with (tmp_path / "requests.jsonl").open("rb") as given, (tmp_path / "answers.jsonl").open("wb") as out:
        proc = serve_wire(tmp_path, given, out)
        assert proc.wait(timeout=bound(30)) == 0, (tmp_path / "wire.stderr").read_text()
    assert_wire_answered((tmp_path / "answers.jsonl").read_bytes())


def test_a_socket_for_stdin_and_stdout_is_served(tmp_path: Path) -> None:
    """One end of a socket pair as both stdin and stdout (as an inetd-style launcher gives
    it): served on the event loop like a pipe; shutting our side's writing ends serving."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        proc = serve_wire(tmp_path, theirs, theirs)
        theirs.close()
        ours.sendall(WIRE_INPUT)
        ours.shutdown(socket.SHUT_WR)
        ours.settimeout(30)
        received = b""
        while chunk := ours.recv(65536):
            received += chunk
        assert proc.wait(timeout=bound(30)) == 0, (tmp_path / "wire.stderr").read_text()
    assert_wire_answered(received)


def test_the_pipes_it_was_given_are_left_blocking(tmp_path: Path) -> None:
    """The server makes its pipes non-blocking while it serves; the flag belongs to the pipe,
    which a launcher (a shell, npx) may share, so it is put back before the server exits."""
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    try:
        proc = serve_wire(tmp_path, read_in, write_out)
        os.write(write_in, WIRE_INPUT)
        os.close(write_in)
        write_in = -1
        os.close(write_out)
        write_out = -1
        with os.fdopen(read_out, "rb", closefd=False) as answers:
            received = answers.read()
        assert proc.wait(timeout=bound(30)) == 0, (tmp_path / "wire.stderr").read_text()
        assert_wire_answered(received)
        assert os.get_blocking(read_in), "stdin's pipe was left non-blocking"
    finally:
        for fd in (read_in, write_in, read_out, write_out):
            if fd >= 0:
                os.close(fd)
