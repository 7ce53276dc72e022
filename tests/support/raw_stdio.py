"""A real `python -m server --root R` over stdio, spoken to in raw JSON-RPC text.

Raw text, not an SDK client, so a test can send what a client library would never
produce (a literal `NaN`) and time each answer; tests.support.mcp.text_of reads its
results. Every wait is bounded; the child is killed in `close()`."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PROTOCOL = "2025-06-18"


class RawStdio:
    def __init__(self, root: Path, stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        with stderr_path.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "server", "--root", str(root)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=REPO,
            )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._answers: dict[int, dict[str, Any]] = {}
        self._next = 0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)

    def send_text(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def request_text(self, method: str, params_json: str) -> int:
        """Send a request whose params are given as JSON text (sent as is); its id."""
        self._next += 1
        self.send_text(f'{{"jsonrpc":"2.0","id":{self._next},"method":"{method}","params":{params_json}}}')
        return self._next

    def request(self, method: str, params: dict[str, Any]) -> int:
        return self.request_text(method, json.dumps(params))

    def answer(self, rid: int, timeout: float = 10) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while rid not in self._answers:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no answer to request {rid} within {timeout}s; stderr: {self.stderr()}")
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            msg = json.loads(line)
            if "id" in msg and ("result" in msg or "error" in msg):
                self._answers[msg["id"]] = msg
        return self._answers.pop(rid)

    def call(self, tool: str, args: dict[str, Any], timeout: float = 10) -> dict[str, Any]:
        """tools/call and its result (raises if the answer is a JSON-RPC error)."""
        msg = self.answer(self.request("tools/call", {"name": tool, "arguments": args}), timeout)
        assert "result" in msg, msg
        return dict(msg["result"])

    def initialize(self, timeout: float = 20) -> None:
        rid = self.request(
            "initialize",
            {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
        )
        self.answer(rid, timeout)
        self.send_text('{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
