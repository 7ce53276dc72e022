"""How fast the file store's plan lock passes from one writer to the next.

    python -m bench.lock_handover [--writers 16] [--rounds 100] [--hold-ms 0.5]

Real processes (one per writer) take one plan's lock in turn, hold it for about as long as
a small write (--hold-ms) and let go, `rounds` times each. Each records the monotonic time
(one clock for the whole machine) at which it got the lock and at which it let go; the
hand-over is the time from one holder's release to the next holder's start, counted where the
lock passes to another writer. Figures: median and p99 in milliseconds, how many hand-overs
there were, the share of the run the lock sat free, and the run's total time, for the lock as it is (waiters queue in
the kernel) and, in the same run, for polling (LOCK_NB and sleeps doubling to 50 ms, what
the store did before, kept in planlock as its fallback).
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from planning_core.stores.files import planlock


def _writer(lock: str, rounds: int, hold: float, polling: bool, start: Any, out: Any) -> None:
    if polling:
        planlock.ABANDONED_WAITERS = 0  # never queue: the polling fallback only
    spans = []
    start.wait()
    for _ in range(rounds):
        with planlock.plan_lock(Path(lock), timeout=600):
            got = time.monotonic()
            end = got + hold
            while time.monotonic() < end:  # a write's work, not a sleep: the holder is busy
                pass
            spans.append((got, time.monotonic(), os.getpid()))
    out.put(spans)


def handover(writers: int, rounds: int, hold_ms: float, *, polling: bool) -> dict[str, float]:
    """Median and p99 hand-over (ms) and the total time (s) of one run."""
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        lock = os.path.join(tmp, ".lock")
        procs = [
            ctx.Process(target=_writer, args=(lock, rounds, hold_ms / 1000, polling, start, out))
            for _ in range(writers)
        ]
        for p in procs:
            p.start()
        time.sleep(0.5)  # let every process import before the start
        begun = time.monotonic()
        start.set()
        spans = sorted(s for _ in procs for s in out.get())
        total = time.monotonic() - begun
        for p in procs:
            p.join()
    # Only a hand-over to another writer: a writer taking the lock again at once is no hand-over.
    gaps = sorted((b[0] - a[1]) * 1000 for a, b in itertools.pairwise(spans) if a[2] != b[2])
    idle = sum((b[0] - a[1]) for a, b in itertools.pairwise(spans))
    return {
        "handovers": len(gaps),
        "idle_share": round(idle / (spans[-1][1] - spans[0][0]), 3),
        "median_ms": round(statistics.median(gaps), 3),
        "p99_ms": round(gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))], 3),
        "total_s": round(total, 2),
    }


def lock_handovers(writers: int = 16, rounds: int = 100, hold_ms: float = 0.5) -> dict[str, dict[str, float]]:
    return {
        "queued": handover(writers, rounds, hold_ms, polling=False),
        "polling": handover(writers, rounds, hold_ms, polling=True),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--hold-ms", type=float, default=0.5)
    args = parser.parse_args()
    print(json.dumps({"load": os.getloadavg()[0], **lock_handovers(args.writers, args.rounds, args.hold_ms)}, indent=1))


if __name__ == "__main__":
    main()
