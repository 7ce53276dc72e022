"""A real server child (`python -m server --store URL`) as one agent of a team, spoken to in
raw JSON-RPC lines over stdio: several calls may be in flight at once (sent back to back,
before any answer is read), so that agents on several servers contend for a plan at once.
Every read is bounded."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.procs import child_env
from tests.support.waits import bound

PROTOCOL = "2025-06-18"


class Agent:
    """One server child and the JSON-RPC lines to and from it (every read bounded)."""

    def __init__(self, name: str, url: str, cwd: Path, log: Path) -> None:
        self.name = name
        self.log = log
        self.pending = b""
        self.next_id = 0
        self.early: dict[int, dict[str, Any]] = {}  # answers read while waiting for another
        self.notices: list[dict[str, Any]] = []  # notifications, in the order read
        with log.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "server", "--store", url],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=child_env(),
                cwd=cwd,
            )

    def send(self, method: str, params: dict[str, Any] | None = None, *, notify: bool = False) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        return self.next_id

    def answer(self, rid: int, timeout: float = bound(60)) -> dict[str, Any]:
        found = self._read_until(lambda: self.early.pop(rid, None), timeout)
        assert found is not None
        return found

    def notice(self, method: str, timeout: float = bound(60)) -> dict[str, Any]:
        """The first notification of `method` not looked at yet (answers read meanwhile are kept)."""

        def first() -> dict[str, Any] | None:
            for i, msg in enumerate(self.notices):
                if msg["method"] == method:
                    return self.notices.pop(i)
            return None

        found = self._read_until(first, timeout)
        assert found is not None
        return found

    def _read_until(self, found: Callable[[], dict[str, Any] | None], timeout: float) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self.pending:
                line, self.pending = self.pending.split(b"\n", 1)
                msg: dict[str, Any] = json.loads(line)
                if "method" in msg and "id" not in msg:
                    self.notices.append(msg)
                elif "method" not in msg and isinstance(msg.get("id"), int):
                    self.early[msg["id"]] = msg  # several calls may be in flight, answered in any order
            got = found()
            if got is not None:
                return got
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            assert ready, f"{self.name}: nothing expected within {timeout}s; stderr: {self.log.read_text()}"
            chunk = os.read(fd, 1 << 16)
            assert chunk, f"{self.name}: the server closed stdout; stderr: {self.log.read_text()}"
            self.pending += chunk

    def start_call(self, tool: str, args: dict[str, Any]) -> int:
        return self.send("tools/call", {"name": tool, "arguments": args})

    def result(self, rid: int) -> tuple[bool, str, dict[str, Any]]:
        """(ok, text, structured content) of a tools/call answer."""
        msg = self.answer(rid)
        assert "result" in msg, msg
        r = msg["result"]
        return not r.get("isError", False), r["content"][0]["text"], r.get("structuredContent") or {}

    def call(self, tool: str, args: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
        return self.result(self.start_call(tool, args))

    def initialize(self) -> None:
        info = {"name": self.name, "version": "0"}
        rid = self.send("initialize", {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": info})
        assert "result" in self.answer(rid), f"{self.name} did not initialize"
        self.send("notifications/initialized", notify=True)
