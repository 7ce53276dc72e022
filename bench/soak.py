"""Crash soak (outside CI): kill -9 writers many times against one plan, auditing the
files after every kill; optionally kill real stdio servers too.

    .venv/bin/python bench/soak.py --kills 5000 [--server-kills 50] [--root DIR] [--seed N]

Same rounds and audit as tests/reliability/test_crashes.py: both use bench/crashkit.py
and bench/audit.py.
Exit status 0 when every audit was clean, 1 at the first problem (the root is kept)."""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.audit import graph_problems, read_tasks, temp_files  # noqa: E402
from bench.crashkit import Tally, audit, one_round, server_round, setup  # noqa: E402
from planning_core.stores.files import FileStore  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kills", type=int, default=2000, help="writer processes to kill -9 (default 2000)")
    p.add_argument("--server-kills", type=int, default=0, help="real stdio servers to kill -9 (default 0)")
    p.add_argument("--root", help="planning root to use (default: a new temp dir)")
    p.add_argument("--seed", type=int, default=int(time.time()))
    args = p.parse_args()
    root = Path(args.root) if args.root else Path(tempfile.mkdtemp(prefix="planning-soak-")) / "root"
    plan = setup(root)
    folder = root / "todo" / plan
    tally = Tally()
    rng = random.Random(args.seed)
    started = time.monotonic()
    print(f"soak: root {root}, seed {args.seed}", flush=True)
    for n in range(args.kills + args.server_kills):
        if n < args.kills:
            one_round(root, plan, tally, rng)
        else:
            server_round(root, plan, tally, rng, sys.executable)
        problems = audit(root, plan, tally)
        if problems:
            print(f"FAIL after kill {tally.rounds}: {problems}\nroot kept at {root}", flush=True)
            return 1
        if tally.rounds % 100 == 0:
            print(
                f"  {tally.rounds} kills, {len(tally.acked)} ids acknowledged, "
                f"{len(temp_files(folder))} temp files left, {time.monotonic() - started:.0f}s",
                flush=True,
            )
    left = len(temp_files(folder))
    FileStore(root).repair(plan)
    tasks, bad = read_tasks(folder)
    after = graph_problems(tasks)
    ok = not bad and not after and not temp_files(folder) and tally.acked <= set(tasks)
    print(
        f"soak: {tally.killed} kills survived, {len(tally.acked)} acknowledged ids and "
        f"{len(tally.acked_edges)} edges all on disk, up to {tally.temp_files_seen} leftover temp files "
        f"ignored by reads ({left} at the end, cleaned by repair), "
        f"{time.monotonic() - started:.0f}s: {'OK' if ok else 'FAIL ' + str((bad, after))}",
        flush=True,
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
