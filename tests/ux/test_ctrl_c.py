"""Ctrl+C where a person presses it: the stdio server started from a real terminal (a pty
whose foreground process group is the server, so ^C is turned into SIGINT by the terminal,
as in a shell), and the SSE server with a client connected.

Rule (server/transport/stdio.py): the first Ctrl+C stops reading and exits 0 once the requests
already read are answered (a tool call in a worker thread finishes its writes); a second
Ctrl+C exits 130 at once. Never a traceback."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import socket
import subprocess
import termios
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server import __version__
from server.transport.stdio import DRAIN_SECONDS
from tests.support.procs import HOST, child_env, console_script, free_port, wait_for_port, wait_until
from tests.support.waits import bound

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "tty", "version": "1"}},
}


class Terminal:
    """A child on a pty of its own: its stdin, stdout and stderr are the terminal, and it
    leads the terminal's foreground process group, so writing ^C is the user's Ctrl+C."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        env = child_env()
        pid, fd = pty.fork()
        if pid == 0:  # the child: nothing but exec (we are a fork of the test process)
            try:
                os.chdir(cwd)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.output = b""
        self.status: int | None = None
        attrs = termios.tcgetattr(fd)  # no echo: the screen shows only what the server writes
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSANOW, attrs)

    def _drain(self, wait: float) -> None:
        if select.select([self.fd], [], [], wait)[0]:
            try:
                self.output += os.read(self.fd, 65536)
            except OSError:  # EIO: the child has gone and the terminal is closed
                time.sleep(wait)

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", errors="replace")

    def read_until(self, needle: str, timeout: float = bound(20)) -> str:
        deadline = time.monotonic() + timeout
        while needle not in self.text:
            if time.monotonic() > deadline:
                raise AssertionError(f"the terminal never showed {needle!r}:\n{self.text}")
            self._drain(0.05)
        return self.text

    def send(self, message: dict[str, Any]) -> None:
        os.write(self.fd, json.dumps(message).encode() + b"\n")

    def ctrl_c(self) -> None:
        os.write(self.fd, b"\x03")

    def exit_code(self, timeout: float) -> int:
        """The child's exit code once it has exited (failing if it is still running after
        `timeout` s); the terminal is read meanwhile so the child never blocks writing."""
        deadline = time.monotonic() + timeout
        while self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"still running {timeout}s after Ctrl+C:\n{self.text}")
            self._drain(0.05)
        self._drain(0.05)
        return os.waitstatus_to_exitcode(self.status)

    def close(self) -> None:
        if self.status is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[list[Terminal]]:
    started: list[Terminal] = []
    yield started
    for t in started:
        t.close()


def stdio_server(terminal: list[Terminal], tmp_path: Path, *extra: str) -> Terminal:
    t = Terminal([console_script(), "--root", str(tmp_path / ".planning"), *extra], cwd=tmp_path)
    terminal.append(t)
    t.read_until("(Ctrl+C to stop)")  # the startup line: it is serving
    return t


def initialize(t: Terminal) -> None:
    t.send(INITIALIZE)
    t.read_until('"id":1,"result"')
    t.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def call(t: Terminal, request_id: int, tool: str, **arguments: Any) -> None:
    t.send(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    )


def test_ctrl_c_stops_an_idle_server_at_once_with_0(terminal: list[Terminal], tmp_path: Path) -> None:
    t = stdio_server(terminal, tmp_path)
    line = f"planning-mcp {__version__}: serving MCP over stdio; plans in {tmp_path / '.planning'} (Ctrl+C to stop)"
    assert line in t.text
    initialize(t)
    started = time.monotonic()
    t.ctrl_c()
    assert t.exit_code(timeout=bound(10)) == 0
    assert time.monotonic() - started < bound(5)
    assert "Traceback" not in t.text and "stopping" not in t.text  # nothing was in progress


def slow_completion(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A TaskCompleted hook that says it started, then waits for the test's go-ahead: a
    completion that is in progress for exactly as long as the test needs."""
    started, go = tmp_path / "hook-started", tmp_path / "go"
    hooks = tmp_path / "hooks.json"
    command = f"touch '{started}'; while [ ! -e '{go}' ]; do sleep 0.05; done"
    hooks.write_text(json.dumps({"TaskCompleted": [{"command": command, "timeout": 120}]}))
    return hooks, started, go


def task_file(root: Path) -> dict[str, Any]:
    (path,) = root.glob("todo/*/task_1.json")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def start_a_slow_completion(terminal: list[Terminal], tmp_path: Path) -> tuple[Terminal, Path]:
    hooks, started, go = slow_completion(tmp_path)
    t = stdio_server(terminal, tmp_path, "--hooks", str(hooks))
    initialize(t)
    call(t, 2, "PlanCreate", title="Try it", analysis="a", approach="b", tasks=[{"subject": "one"}])
    t.read_until('"id":2,"result"')
    call(t, 3, "TaskUpdate", taskId=1, status="completed")
    wait_until(started.exists, "the TaskCompleted hook started")
    return t, go


def test_ctrl_c_lets_the_call_in_progress_finish_then_exits_0(terminal: list[Terminal], tmp_path: Path) -> None:
    t, go = start_a_slow_completion(terminal, tmp_path)
    try:
        t.ctrl_c()
        t.read_until("stopping once the request in progress is answered; Ctrl+C again to stop at once")
        assert task_file(tmp_path / ".planning")["status"] == "pending"  # still running: nothing cut short
    finally:
        go.touch()
    assert t.exit_code(timeout=bound(20)) == 0
    assert '"id":3,"result"' in t.text  # the call finished and was answered
    assert task_file(tmp_path / ".planning")["status"] == "completed"
    assert "Traceback" not in t.text


def test_ctrl_c_waits_for_a_call_longer_than_the_end_of_input_bound(terminal: list[Terminal], tmp_path: Path) -> None:
    """End of stdin gives calls in progress DRAIN_SECONDS; after Ctrl+C the person was told a
    second one stops at once, so a longer call (a TaskCompleted hook running tests) is still
    answered, not cut off when that bound runs out."""
    t, go = start_a_slow_completion(terminal, tmp_path)
    try:
        t.ctrl_c()
        t.read_until("Ctrl+C again to stop at once")
        # Not a start signal: outlasting the bound is what is tested (the terminal is read meanwhile).
        outlasted = time.monotonic() + DRAIN_SECONDS + 1
        while time.monotonic() < outlasted:
            t._drain(0.1)
        assert os.waitpid(t.pid, os.WNOHANG)[0] == 0, f"stopped before the call was answered:\n{t.text}"
    finally:
        go.touch()
    assert t.exit_code(timeout=bound(20)) == 0
    assert '"id":3,"result"' in t.text
    assert task_file(tmp_path / ".planning")["status"] == "completed"


def test_a_second_ctrl_c_stops_at_once_with_130(terminal: list[Terminal], tmp_path: Path) -> None:
    t, go = start_a_slow_completion(terminal, tmp_path)
    try:
        t.ctrl_c()
        t.read_until("Ctrl+C again to stop at once")
        t.ctrl_c()
        assert t.exit_code(timeout=bound(5)) == 130
    finally:
        go.touch()  # the hook runs in a session of its own and outlives us: let it end
    assert "stopping at once" in t.text and "Traceback" not in t.text
    assert '"id":3' not in t.text
    assert task_file(tmp_path / ".planning")["status"] == "pending"  # whole, as before the call


def test_ctrl_c_on_sse_with_a_client_connected_is_quiet(tmp_path: Path) -> None:
    port = free_port()
    stderr_path = tmp_path / "sse.stderr"
    args = [console_script(), "serve", "--transport", "sse", "--port", str(port), "--root", str(tmp_path / "r")]
    with stderr_path.open("wb") as err:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=child_env())
    try:
        wait_for_port(proc, port, stderr_path)
        with socket.create_connection((HOST, port), timeout=bound(10)) as client:
            client.sendall(f"GET /sse HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
            got = b""
            while b"event: endpoint" not in got:
                chunk = client.recv(4096)
                assert chunk, got
                got += chunk
            proc.send_signal(signal.SIGINT)  # what Ctrl+C in its terminal sends
            assert proc.wait(timeout=bound(20)) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=bound(10))
    stderr = stderr_path.read_text()
    assert "Traceback" not in stderr and "Exception in ASGI application" not in stderr, stderr
