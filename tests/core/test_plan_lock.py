"""The file store's plan lock (planning_core/stores/files/planlock.py) between real processes.

A writer that finds a plan held waits in the kernel's queue for it; these tests hold the
lock in another process and check what a waiting writer relies on: it gets the lock once
the holder lets go, it gives up at its timeout, a writer that gave up never keeps the lock
from the next one, and a holder that never lets go does not make a process grow threads
without bound.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from planning_core.stores.files import planlock
from planning_core.stores.files.planlock import LockTimeout, plan_lock
from tests.support.waits import bound

_HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
"""


@contextmanager
def held_elsewhere(lock: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holds `lock` until its stdin is closed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=bound(10))


def test_a_waiting_writer_gets_the_lock_once_the_holder_lets_go(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    got = threading.Event()

    def writer() -> None:
        with plan_lock(lock, timeout=bound(30)):
            got.set()

    with held_elsewhere(lock) as holder:
        thread = threading.Thread(target=writer)
        thread.start()
        assert not got.wait(0.2), "the lock was taken while another process held it"
        assert holder.stdin is not None
        holder.stdin.close()
        holder.stdin = None
        assert got.wait(bound(10)), "the waiting writer never got the freed lock"
    thread.join(bound(10))


def test_a_writer_gives_up_at_its_timeout_and_never_keeps_the_lock(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    with held_elsewhere(lock), pytest.raises(LockTimeout), plan_lock(lock, timeout=0.1):
        pass
    # The writer that gave up may still be queued in the kernel when the holder lets go:
    # it must pass the lock on, not keep it.
    with plan_lock(lock, timeout=bound(10)):
        pass
    probe = subprocess.run(
        [sys.executable, "-c", _HOLDER.replace("sys.stdin.readline()", ""), str(lock)],
        capture_output=True,
        text=True,
        timeout=bound(10),
    )
    assert probe.stdout.strip() == "held"


def test_a_holder_that_never_lets_go_costs_a_bounded_number_of_threads(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    before = threading.active_count()
    with held_elsewhere(lock):
        for _ in range(planlock.ABANDONED_WAITERS * 3):
            with pytest.raises(LockTimeout), plan_lock(lock, timeout=0.001):
                pass
        assert threading.active_count() - before <= planlock.ABANDONED_WAITERS + 1
    with plan_lock(lock, timeout=bound(10)):
        pass
