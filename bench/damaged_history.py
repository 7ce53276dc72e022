"""What a damaged or hostile history log costs the file store: a plan whose log ends in N MiB
of NULs without a line break, or of short broken lines, then a good record.

    python -m bench.damaged_history [--mib 16 64] [--runs 3]

Figures: the median milliseconds of TaskGet's last events of a task, of a server's start-up
repair (`recover`, which settles every plan's log), of a TaskUpdate (under the plan's lock,
it reads the log's last record twice) and of the newest page of the log. The logs are sparse
files where they can be (NULs) so a gigabyte costs no disk. RELIABILITY.md ("What a
repository can make planning-mcp do") quotes them.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from planning_core import Planner
from planning_core.stores.files import FileStore, historyread

KINDS = {"NULs": b"", "short broken lines": b"x\n"}


def _seconds(run: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _damaged_plan(root: Path, mib: int, filler: bytes) -> tuple[FileStore, Planner, str]:
    store = FileStore(root)
    store.ensure_writable()
    planner = Planner(store)
    name = planner.create_plan("Damaged", analysis="", approach="", tasks=[{"subject": "a"}, {"subject": "b"}]).name
    log = store.plan_folder(name) / historyread.LOG
    with log.open("r+b") as f:
        size = log.stat().st_size
        if filler:
            f.seek(size)
            f.write(filler * ((mib << 20) // len(filler)))
        else:
            f.truncate(size + (mib << 20))  # a hole: NULs that cost no disk
    return store, planner, name


def measure(mib: int, filler: bytes, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store, planner, name = _damaged_plan(Path(tmp) / "root", mib, filler)
        figures = {
            "TaskGet's events": _seconds(lambda: store.task_events(name, 1, 3), runs),
            "start-up repair": _seconds(lambda: FileStore(Path(tmp) / "root").recover(), runs),
        }
        # The first write sets the damaged segment aside; what is measured is that first one.
        figures["TaskUpdate"] = _seconds(lambda: planner.update_task(name, 1, description="x"), 1)
        figures["log page"] = _seconds(lambda: store.plan_events(name, 50), 1)  # later ones are kept pages
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    for kind, filler in KINDS.items():
        for mib in args.mib:
            figures = measure(mib, filler, args.runs)
            shown = ", ".join(f"{what} {value * 1000:,.1f} ms" for what, value in figures.items())
            print(f"{mib} MiB of {kind}: {shown}")


if __name__ == "__main__":
    main()
