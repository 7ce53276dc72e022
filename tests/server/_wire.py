"""A raw JSON-RPC client over a real `planning-mcp` stdio child, for the protocol tests
that must see every frame the server writes (how many copies of a notification, in
what order) rather than what an SDK client makes of them.

Every wait is bounded; the child is killed in a `finally`."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.e2e._support import child_env, console_script, stop

WAIT = 15.0
LEGACY_VERSION = "2025-06-18"


class Wire:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.notifications: list[dict[str, Any]] = []
        self._buffer = b""
        self._next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def send_many(self, messages: list[dict[str, Any]]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.proc.stdin.flush()

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _read_one(self, deadline: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            assert left > 0, f"no frame from the server within {WAIT}s"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                assert chunk, f"server closed stdout (exit {self.proc.poll()})"
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return dict(json.loads(line))

    def wait_for(self, done: Callable[[dict[str, Any]], bool], timeout: float = WAIT) -> dict[str, Any]:
        """Read frames until one satisfies `done`; notifications are kept in order."""
        deadline = time.monotonic() + timeout
        while True:
            frame = self._read_one(deadline)
            if "id" not in frame:
                self.notifications.append(frame)
            if done(frame):
                return frame

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return its response (result or error)."""
        rid = self.next_id()
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params else {})})
        return self.wait_for(lambda f: f.get("id") == rid and "method" not in f)

    def responses(self, ids: set[int], timeout: float = 120.0) -> None:
        """Wait until every request in `ids` is answered."""
        pending = set(ids)
        self.wait_for(lambda f: pending.discard(f.get("id")) or not pending, timeout)  # type: ignore[func-returns-value]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        response = self.request("tools/call", {"name": name, "arguments": arguments})
        return dict(response["result"])

    def updated(self, uri: str) -> Callable[[dict[str, Any]], bool]:
        return lambda f: f.get("method") == "notifications/resources/updated" and f["params"]["uri"] == uri

    def methods(self) -> list[str]:
        """The notifications so far as `updated <uri>` / `list_changed` labels, in order."""
        out = []
        for n in self.notifications:
            if n.get("method") == "notifications/resources/updated":
                out.append(f"updated {n['params']['uri']}")
            elif n.get("method") == "notifications/resources/list_changed":
                out.append("list_changed")
        return out

    def rss_kib(self) -> int:
        """The server's resident memory, from /proc."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")


@contextmanager
def stdio_server(root: Path, errlog: Path) -> Iterator[Wire]:
    """`planning-mcp --root ROOT` (stdio), initialized as a 2025 client."""
    with errlog.open("wb") as err:
        proc = subprocess.Popen(
            [console_script(), "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            env=child_env(),
            cwd=root.parent,
        )
    try:
        wire = Wire(proc)
        init = wire.request(
            "initialize",
            {
                "protocolVersion": LEGACY_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "wire-test", "version": "0"},
            },
        )
        assert "result" in init, init
        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield wire
    finally:
        stop(proc)
