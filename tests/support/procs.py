"""Children the tests start: the CLI, `planning-mcp serve` on a free port on 127.0.0.1,
and bounded waits for what they signal (a port that answers, a line, a file).

Every wait is bounded and every child is killed in a `finally`."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.waits import bound

REPO = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"


def answer_start(s: socket.socket) -> tuple[int, bytes]:
    """An HTTP answer on `s` read to the end of its headers: its status code (0 when the
    connection closed before one came) and the bytes of the body that came with them."""
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(65536)
        if not chunk:
            break
        head += chunk
    status = head.split(b" ", 2)[1:2]
    return (int(status[0]) if status and status[0].isdigit() else 0), head.partition(b"\r\n\r\n")[2]


_CLONE: list[Path] = []


def as_cloned() -> Path:
    """This checkout as `git clone` would give it (the tracked files, and new ones git does not
    ignore), copied once per test process: what Claude Code copies when it installs the plugin
    from a local marketplace. The checkout itself would be copied whole, its .venv and the
    node_modules the tests install included (gigabytes, minutes on a busy machine)."""
    if not _CLONE:
        import atexit
        import tempfile

        listed = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout.decode()
        made = tempfile.mkdtemp(prefix="planning-mcp-clone-")
        atexit.register(shutil.rmtree, made, True)
        clone = Path(made) / REPO.name
        for name in filter(None, listed.split("\0")):
            source = REPO / name
            if source.is_symlink() or not source.is_file():
                continue  # a link (node_modules in a worktree) or a file deleted but not yet staged
            target = clone / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        _CLONE.append(clone)
    return _CLONE[0]


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
    args: Sequence[str], *, timeout: float = bound(20), env: Mapping[str, str] | None = None
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
            proc.wait(timeout=bound(5))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=bound(5))


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


def wait_until(ready: Callable[[], bool], what: str, timeout: float = bound(20), every: float = 0.05) -> None:
    """Poll `ready` until it is true; fail naming `what` after `timeout` seconds. For a
    signal the child gives by a change we can only look at (a file, a port, a screen)."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout}s")
        time.sleep(every)


SERVING_MARK = "(Ctrl+C to stop)"  # the end of the server's one startup line


def wait_for_port(proc: subprocess.Popen[Any], port: int, stderr_path: Path, timeout: float = bound(20)) -> None:
    """The handshake of a server child: its port answers (or it exited, which fails)."""

    def listening() -> bool:
        if proc.poll() is not None:
            raise AssertionError(
                f"server exited with {proc.returncode} before listening: "
                + stderr_path.read_text(encoding="utf-8", errors="replace")
            )
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                return True
        except OSError:
            return False

    wait_until(listening, f"server listening on {port}", timeout)


@contextmanager
def serving(tmp_path: Path, transport: str, *, root: Path | None = None, token: str | None = None) -> Iterator[Served]:
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
        # The socket listens just before the serving line is printed: wait for the line too,
        # so a test reading stderr sees the whole startup.
        wait_until(
            lambda: SERVING_MARK in stderr_path.read_text(encoding="utf-8", errors="replace"), "the serving line"
        )
        yield Served(proc, port, stderr_path)
    finally:
        stop(proc)


def gone(pid: int, *, group: bool = False, within: float | None = None) -> bool:
    """Whether the process `pid` (or, with group, every process of the group `pid`) is gone
    within `within` seconds (a bound of 10 by default). A zombie counts as gone: a killed child
    may linger as one until its new parent reaps it."""
    deadline = time.monotonic() + (bound(10) if within is None else within)
    signal_to = os.killpg if group else os.kill
    while time.monotonic() < deadline:
        try:
            signal_to(pid, 0)
        except ProcessLookupError:
            return True
        if not group and _zombie(pid):
            return True
        time.sleep(0.05)
    return False


def _zombie(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # gone between the signal and the read
    return state in ("Z", "X")
