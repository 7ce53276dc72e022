"""Kill -9 rounds against a plain writer process; shared by bench/soak.py and
tests/reliability/test_crashes.py (which imports it from here).

A round forks a fresh writer (planning_core imported once, in the parent, so a round
costs milliseconds, not an interpreter start). The writer creates, links and updates
tasks as fast as it can and reports each acknowledged id on a pipe right after the
store call returned. The parent SIGKILLs it once it has acknowledged 0-2 writes, after a
further random 5-50 ms, then audits the files directly."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.audit import dangling, graph_problems, read_tasks, temp_files
from planning_core import Planner, PlanningError
from planning_core.stores.files import FileStore

PLAN_DATE, PLAN_SLUG = "2026-05-28", "crash"
LOCK_TIMEOUT = 2.0


@dataclass
class Tally:
    rounds: int = 0
    killed: int = 0  # rounds in which the writer was still running when SIGKILL came
    acked: set[int] = field(default_factory=set)
    acked_edges: set[tuple[int, int]] = field(default_factory=set)
    temp_files_seen: int = 0
    busy: int = 0


def setup(root: Path) -> str:
    store = FileStore(root)
    store.ensure_writable()
    return Planner(store).create_plan("Crash", name=PLAN_SLUG, date=PLAN_DATE).name


def _writer(root: Path, plan: str, out: int, seed: int) -> None:
    """Runs in the forked child. Never returns."""
    try:
        rng = random.Random(seed)
        planner = Planner(FileStore(root, lock_timeout=LOCK_TIMEOUT))
        os.write(out, b"start\n")
        known = sorted(planner.store.snapshot(plan).tasks)
        while True:
            kind = rng.random()
            try:
                if kind < 0.6 or len(known) < 2:
                    before = [rng.choice(known)] if known and rng.random() < 0.5 else []
                    t = planner.create_task(plan, f"s{seed}", "x" * rng.randrange(0, 3000), blocked_by=before)
                    known.append(t.id)
                    os.write(out, f"id {t.id} {' '.join(map(str, before))}\n".encode())
                elif kind < 0.85:
                    a, b = rng.sample(known, 2)
                    planner.update_task(plan, a, add_blocked_by=[b])
                    os.write(out, f"edge {a} {b}\n".encode())
                else:
                    planner.update_task(plan, rng.choice(known), status=rng.choice(["pending", "completed"]))
            except PlanningError as e:
                if "busy" in str(e):
                    os.write(out, b"busy\n")
                    os._exit(3)
    finally:
        os._exit(1)


READ_TIMEOUT = 60.0  # seconds a writer may take to say it started or wrote (a loaded machine)
ACKED = (b"id ", b"edge ")  # the lines of an acknowledged write


def _read_until(r: int, buf: bytes, enough: Callable[[bytes], bool]) -> bytes:
    """`buf` and what the writer says next, until `enough` of it (or the writer is gone)."""
    deadline = time.monotonic() + READ_TIMEOUT
    while not enough(buf):
        chunk = os.read(r, 4096)
        if not chunk:
            break
        buf += chunk
        assert time.monotonic() < deadline, "the writer said nothing for READ_TIMEOUT"
    return buf


def _acked_lines(buf: bytes) -> int:
    return sum(1 for line in buf.split(b"\n")[:-1] if line.startswith(ACKED))


def one_round(root: Path, plan: str, tally: Tally, rng: random.Random) -> None:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        _writer(root, plan, w, rng.randrange(1 << 30))
    os.close(w)
    # The kill comes after the writer is up (it takes the lock right after) and has
    # acknowledged 0, 1 or 2 writes (a handshake, not a time: on a busy machine a writer may
    # write nothing in 50 ms), then after a random 5-50 ms: anywhere in the write under way.
    wanted = rng.randrange(3)
    buf = _read_until(r, b"", lambda b: b"start\n" in b)
    buf = _read_until(r, buf, lambda b: _acked_lines(b) >= wanted)
    time.sleep(rng.uniform(0.005, 0.050))
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    tally.rounds += 1
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
        tally.killed += 1
    while chunk := os.read(r, 65536):
        buf += chunk
    os.close(r)
    for line in buf.decode().splitlines():  # a line cut short by the kill was never acknowledged
        parts = line.split()
        if parts[:1] == ["id"] and len(parts) >= 2:
            tally.acked.add(int(parts[1]))
            tally.acked_edges.update((int(parts[1]), int(b)) for b in parts[2:])
        elif parts[:1] == ["edge"] and len(parts) == 3:
            tally.acked_edges.add((int(parts[1]), int(parts[2])))
        elif parts[:1] == ["busy"]:
            tally.busy += 1


def audit(root: Path, plan: str, tally: Tally) -> list[str]:
    """What a crash broke, read from the files. Empty means nothing."""
    folder = root / "todo" / plan
    problems: list[str] = []
    tasks, bad = read_tasks(folder)
    if bad:
        problems.append(f"unparseable task files {bad}")
    lost = sorted(tally.acked - set(tasks))
    if lost:
        problems.append(f"acknowledged ids lost {lost}")
    lost_edges = sorted((a, b) for a, b in tally.acked_edges if a in tasks and b not in tasks[a]["blockedBy"])
    if lost_edges:
        problems.append(f"acknowledged edges lost {lost_edges}")
    # blockedBy is the truth; blocks may lag a crash between two renames (repaired on load).
    problems += graph_problems(tasks, mirror=False)
    problems += dangling(folder)  # not even a lagging `blocks` may name a task with no file
    snap = FileStore(root).snapshot(plan)
    if snap.corrupt:
        problems.append(f"store reports corrupt {snap.corrupt}")
    view = {i: {"blockedBy": t.blocked_by, "blocks": t.blocks} for i, t in snap.tasks.items()}
    problems += [f"snapshot: {p}" for p in graph_problems(view)]
    if set(snap.tasks) != set(tasks):
        problems.append("snapshot and files disagree on the ids")
    tally.temp_files_seen = max(tally.temp_files_seen, len(temp_files(folder)))
    if tally.busy:
        problems.append(f"a writer found the lock held by a dead process ({tally.busy} rounds)")
    return problems


def server_round(root: Path, plan: str, tally: Tally, rng: random.Random, python: str) -> None:
    """Kill -9 a real `python -m server` (driven over stdio by stdio_driver.py) mid-stream."""
    driver = subprocess.Popen(
        [python, str(Path(__file__).with_name("stdio_driver.py")), str(root), plan, str(rng.randrange(1 << 30))],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert driver.stdout is not None
        first = driver.stdout.readline().split()
        assert first[:1] == ["server"] and len(first) == 2, first
        server_pid = int(first[1])
        lines = []
        deadline = time.monotonic() + rng.uniform(0.05, 0.4)
        while time.monotonic() < deadline:  # let it acknowledge a few creates
            line = driver.stdout.readline()
            if not line:
                break
            lines.append(line)
        os.kill(server_pid, signal.SIGKILL)
        tally.rounds += 1
        tally.killed += 1
        driver.kill()
        rest, _ = driver.communicate(timeout=30)
        lines += rest.splitlines()
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait(10)
    for line in lines:
        parts = line.split()
        if parts[:1] == ["id"] and len(parts) >= 2:
            tally.acked.add(int(parts[1]))
            tally.acked_edges.update((int(parts[1]), int(b)) for b in parts[2:])


# -- kill points: SIGKILL right before each disk write of one operation ----------------

_WRITES = ("write", "fsync", "replace", "rename", "unlink", "mkdir", "rmdir", "link")
_CREATING = os.O_WRONLY | os.O_RDWR | os.O_CREAT


def _arm(kill_at: int, counter: list[int]) -> None:
    """In the forked child only: count every os call that changes the disk (an open that
    may create or write, write, fsync, rename, unlink, mkdir ...) and SIGKILL this process
    right before call number `kill_at`. The kill is a real kill -9; nothing is faked."""

    def hook(name: str, real: Callable[..., object]) -> Callable[..., object]:
        def call(*args: object, **kwargs: object) -> object:
            flags = args[1] if len(args) > 1 else kwargs.get("flags", 0)
            if name != "open" or int(flags) & _CREATING:  # type: ignore[call-overload]
                if counter[0] == kill_at:
                    os.kill(os.getpid(), signal.SIGKILL)
                counter[0] += 1
            return real(*args, **kwargs)

        return call

    for name in (*_WRITES, "open"):
        setattr(os, name, hook(name, getattr(os, name)))


def run_killed_at(root: Path, op: Callable[[Planner], object], kill_at: int) -> tuple[bool, int]:
    """Run `op` in a forked writer that kills itself before disk write `kill_at` (-1: never).
    Returns (was it killed by SIGKILL, how many disk writes the op made if it finished)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        report = os.write
        try:
            os.close(r)
            planner = Planner(FileStore(root, lock_timeout=LOCK_TIMEOUT))
            counter = [0]
            _arm(kill_at, counter)
            op(planner)
            report(w, f"done {counter[0]}".encode())
        except BaseException as e:  # reported to the parent, which fails the test
            report(w, f"error {e!r}".encode())
        finally:
            os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    out = b""
    while chunk := os.read(r, 65536):
        out += chunk
    os.close(r)
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    said = out.decode().split(maxsplit=1)
    assert killed or said[:1] == ["done"], f"the writer failed: {out.decode()}"
    return killed, int(said[1]) if said[:1] == ["done"] else -1
