"""Helpers for the end-to-end tests: real subprocesses, real ports on 127.0.0.1.

Every wait is bounded and every child is killed in a `finally`."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"

PLAN_DATE = "2026-05-28"
PLAN_NAME = f"{PLAN_DATE}-add-auth"
SUBJECTS = ["Design auth schema", "Implement JWT middleware", "Add login endpoint", "Add logout endpoint"]
SEED_SUMMARY = "\n".join(
    [
        "[Session Plan] Active tasks:",
        f"  ▸ {PLAN_NAME} [2/4 done]",
        f"    [x] #1: {SUBJECTS[0]}",
        f"    [x] #2: {SUBJECTS[1]}",
        f"    [>] #3: {SUBJECTS[2]}",
        f"    [ ] #4: {SUBJECTS[3]}",
    ]
)
SEED_ACTIVE_LINE = f'- {PLAN_NAME} [2/4 done] current: "{SUBJECTS[2]}"'


def console_script() -> str:
    """The venv's `planning-mcp`, next to the running interpreter (else on PATH)."""
    here = Path(sys.executable).parent / "planning-mcp"
    if here.exists():
        return str(here)
    found = shutil.which("planning-mcp")
    assert found, "the planning-mcp console script is not installed"
    return found


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child: ours, minus the token, with the repo importable."""
    env = {k: v for k, v in os.environ.items() if k != "PLANNING_MCP_TOKEN"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def run_cli(
    args: Sequence[str], *, timeout: float = 20, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `planning-mcp ARGS` to completion (bounded)."""
    return subprocess.run(
        [console_script(), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        env=child_env(env),
        stdin=subprocess.DEVNULL,
    )


def stop(proc: subprocess.Popen[Any]) -> None:
    """Terminate a child we started, then kill it if it lingers."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    port: int
    stderr_path: Path

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


def wait_for_port(proc: subprocess.Popen[Any], port: int, stderr_path: Path, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(
                f"server exited with {proc.returncode} before listening: "
                + stderr_path.read_text(encoding="utf-8", errors="replace")
            )
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"server did not listen on {port} within {timeout}s")


@contextmanager
def serving(
    tmp_path: Path, transport: str, *, root: Path | None = None, token: str | None = None
) -> Iterator[Served]:
    """`planning-mcp serve --transport T --port P --root R [--token X]` as a child process."""
    root = root or tmp_path / f"root-{transport}"
    port = free_port()
    stderr_path = tmp_path / f"serve-{transport}-{port}.stderr"
    args = [console_script(), "serve", "--transport", transport, "--port", str(port), "--root", str(root)]
    if token is not None:
        args += ["--token", token]
    with stderr_path.open("wb") as err:
        proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=child_env(), cwd=tmp_path
        )
    try:
        wait_for_port(proc, port, stderr_path)
        yield Served(proc, port, stderr_path)
    finally:
        stop(proc)
