"""A real stdio server child (`python -m server --root R`, or the console script),
spoken to in raw JSON-RPC lines.

Raw text, not an SDK client, so a test can send what a client library would never
produce (a literal `NaN`, bytes that are not UTF-8, a 64 MB line) and time each answer;
tests.support.mcp.text_of reads its results. Every read is bounded (select on the pipe),
and every line the server writes must be a JSON-RPC message. `close()` ends the child."""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tests.support.waits import bound

from .procs import REPO, child_env, stop

PROTOCOL = "2025-06-18"
MODULE = (sys.executable, "-m", "server")


class RawStdio:
    """`in_order`: answers must come in the order they are asked for; any other answer
    while waiting for one fails (for the hostile-input tests, where a stray or repeated
    answer is itself the bug). Otherwise answers to other ids are kept for later."""

    def __init__(
        self,
        root: Path,
        stderr_path: Path,
        *extra: str,
        command: Sequence[str] = MODULE,
        cwd: Path = REPO,
        in_order: bool = False,
    ) -> None:
        self.stderr_path = stderr_path
        self.in_order = in_order
        self.pending = b""  # bytes read from stdout after the last complete line
        self.notifications: list[dict[str, Any]] = []  # every one, in the order written
        self._noticed = 0  # notifications before this index were looked at by notification()
        self._answers: dict[Any, dict[str, Any]] = {}
        self._next = 0
        with stderr_path.open("wb") as err:
            self.proc = subprocess.Popen(
                [*command, "--root", str(root), *extra],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=child_env(),
                cwd=cwd,
            )

    # -- bytes ----------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send_text(self, text: str) -> None:
        self.send(text.encode() + b"\n")

    def message(self, timeout: float = bound(20)) -> dict[str, Any]:
        """The next line the server writes, parsed (a notification is also recorded)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            if not ready:
                raise AssertionError(f"no message from the server within {timeout}s; stderr: {self.stderr()}")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                code = self.proc.poll()
                raise AssertionError(f"the server closed stdout (exit code {code}); stderr: {self.stderr()}")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        parsed: dict[str, Any] = json.loads(line)  # anything else on stdout would break a client
        assert parsed.get("jsonrpc") == "2.0", parsed
        if "id" not in parsed:
            self.notifications.append(parsed)
        return parsed

    # -- requests -------------------------------------------------------------------

    def request(self, method: str, params: dict[str, Any] | None = None, *, rid: Any = None) -> Any:
        """Send a request (with the next free id unless `rid` is given); its id."""
        if rid is None:
            self._next += 1
            rid = self._next
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message).encode() + b"\n")
        return rid

    def request_text(self, method: str, params_json: str) -> int:
        """Send a request whose params are given as JSON text (sent as is); its id."""
        self._next += 1
        self.send_text(f'{{"jsonrpc":"2.0","id":{self._next},"method":"{method}","params":{params_json}}}')
        return self._next

    def answer(self, rid: Any, timeout: float = bound(20)) -> dict[str, Any]:
        """The answer (result or error) to request `rid`; notifications are skipped."""
        deadline = time.monotonic() + timeout
        while rid not in self._answers:
            msg = self.message(max(deadline - time.monotonic(), 0.01))
            if "id" in msg and "method" not in msg:
                if self.in_order:
                    assert msg["id"] == rid, f"expected the answer to {rid!r}, got {msg}"
                self._answers[msg["id"]] = msg
        return self._answers.pop(rid)

    def notification(self, matches: Callable[[dict[str, Any]], bool], timeout: float = bound(20)) -> dict[str, Any]:
        """The next notification that `matches`, looking on from the one the last call
        returned (so one already read while waiting for an answer counts); answers read
        meanwhile are kept for answer()."""
        deadline = time.monotonic() + timeout
        while True:
            for i in range(self._noticed, len(self.notifications)):
                if matches(self.notifications[i]):
                    self._noticed = i + 1
                    return self.notifications[i]
            self._noticed = len(self.notifications)
            msg = self.message(max(deadline - time.monotonic(), 0.01))
            if "id" in msg and "method" not in msg:
                self._answers[msg["id"]] = msg

    def call(self, tool: str, args: dict[str, Any], timeout: float = bound(20), *, rid: Any = None) -> dict[str, Any]:
        """tools/call and its result (fails if the answer is a JSON-RPC error)."""
        msg = self.answer(self.request("tools/call", {"name": tool, "arguments": args}, rid=rid), timeout)
        assert "result" in msg, msg
        return dict(msg["result"])

    def initialize(self, timeout: float = bound(30)) -> None:
        rid = self.request(
            "initialize",
            {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
        )
        assert "result" in self.answer(rid, timeout)
        self.send_text('{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def assert_serving(self) -> None:
        self.call("TaskList", {}, rid="still-there")
        assert self.proc.poll() is None

    # -- the process ----------------------------------------------------------------

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        """End of input (the way a client leaves), then stop the child if it lingers."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(BrokenPipeError):  # it may have stopped already
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=bound(5))
        except subprocess.TimeoutExpired:
            stop(self.proc)
