"""How fast the history of a big plan reads: a plan of 10,000 tasks with 100,000 recorded
events, on the file store and on PostgreSQL, against a TaskList page of the same plan.

    python -m bench.history_read [--tasks 10000] [--events 100000] [--runs 30]

The events are written in the stores' own formats (the file store's log lines with their
commit markers, through historylog; the database's rows, through its insert), without
running 100,000 writes: what is measured is the read. Figures: median milliseconds of
the newest page of the plan's log (50 events), of TaskGet's last 3 events of a task
changed lately and of one never changed since the plan was made (the worst case: the
whole kept log is searched), and of a TaskList page (200 tasks), each after a warm-up.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planning_core import Planner
from planning_core.history import Entry, Event
from planning_core.models import Task
from planning_core.queries import page_of, page_query
from planning_core.store import History, PlanStore
from planning_core.stores import open_store
from planning_core.stores.files import FileStore, historylog

PLAN_DATE = "2026-12-01"


def _median_ms(run: Callable[[], object], runs: int) -> float:
    run()  # warm-up: caches, the page cache
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        run()
        times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), 2)


def _entry(k: int, tasks: int) -> Entry:
    task = 1 + (k * 7919) % (tasks - 1)  # never the last task: it is the "never changed" one
    at = f"2026-12-01T{(k // 3600) % 24:02d}:{(k // 60) % 60:02d}:{k % 60:02d}.000Z"
    event = Event("updated", task, f"task {task}", status=("pending", "in_progress"), owner=("", f"agent-{k % 16}"))
    return Entry(at, f"http:session-{k % 16}", [event])


def _make_plan(store: PlanStore, tasks: int) -> str:
    now = "2026-12-01T00:00:00Z"
    made = [Task(id=i, subject=f"task {i}", created_at=now, updated_at=now) for i in range(1, tasks + 1)]
    return store.create_plan(PLAN_DATE, "history", "# History bench\n", made, by="bench")


def _fill_files(store: FileStore, name: str, tasks: int, events: int) -> None:
    folder = str(store.plan_folder(name))
    for k in range(2, events + 2):  # the shape commit_logged writes: the entry, then its marker
        redo = {"tmp": [[".task_1.json.1.00000000.tmp", "task_1.json", 1, 0]], "rm": []}
        historylog._append(folder, {"seq": k, **_entry(k, tasks).to_dict(), "redo": redo}, sync=False, rotate=True)
        historylog._append(folder, {"seq": k, "done": 1}, sync=False)


def _fill_postgres(store: Any, name: str, tasks: int, events: int) -> None:
    from planning_core.stores.postgres.schema import HISTORY

    rows = []
    for k in range(2, events + 2):
        e = _entry(k, tasks)
        rows.append((name, k, e.at, e.by, e.events[0].task, json.dumps(e.events[0].to_dict(), separators=(",", ":"))))
    with store.db.connection() as conn, conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {HISTORY} (plan, entry, at, by, task, event) VALUES (%s,%s,%s,%s,%s,%s)", rows)
        conn.execute("ANALYZE " + HISTORY)
        conn.commit()


def measure(store: PlanStore, tasks: int, events: int, runs: int) -> dict[str, Any]:
    name = _make_plan(store, tasks)
    if isinstance(store, FileStore):
        _fill_files(store, name, tasks, events)
    else:
        _fill_postgres(store, name, tasks, events)
    assert isinstance(store, History)
    planner = Planner(store)
    recent = _entry(events + 1, tasks).events[0].task or 1
    kept = len(store.plan_events(name, 1000)[0])
    page_200 = page_query(limit=200)
    return {
        "log page (50 events)": _median_ms(lambda: store.plan_events(name, 50), runs),
        "task's last 3 events (changed lately)": _median_ms(lambda: store.task_events(name, recent, 3), runs),
        "task's last 3 events (never changed)": _median_ms(lambda: store.task_events(name, tasks, 3), runs),
        "TaskList page (200 tasks)": _median_ms(
            lambda: page_of(planner.store.view(name), page_200, planner.clock()), runs
        ),
        "events kept (first 1,000 read)": kept,
    }


def history_reads(tasks: int, events: int, runs: int, postgres: bool) -> dict[str, dict[str, Any]]:
    """The figures, per store: the file store in a temp root, PostgreSQL in a throwaway cluster."""
    figures: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as top:
        store = FileStore(Path(top) / "root")
        store.prepare()
        figures["files"] = measure(store, tasks, events, runs)
        segments = sorted((Path(top) / "root" / "todo").glob("*/history*.jsonl"))
        figures["files"]["log bytes on disk"] = sum(s.stat().st_size for s in segments)
        store.close()
    if postgres:
        from bench.pgcluster import throwaway_database

        with throwaway_database() as url:
            pg = open_store(url)
            pg.prepare()
            figures["postgres"] = measure(pg, tasks, events, runs)
            pg.close()
    return figures


READS = (
    "log page (50 events)",
    "task's last 3 events (changed lately)",
    "task's last 3 events (never changed)",
    "TaskList page (200 tasks)",
)


def history_section(figures: dict[str, dict[str, Any]], tasks: int, events: int) -> list[str]:
    """BENCHMARKS.md's section: median ms of each read, per store, and the target's check."""
    from bench.mdtable import table

    stores = list(figures)
    rows = [[read, *(f"{figures[s][read]:.2f}" for s in stores)] for read in READS]
    verdict = [
        f"{s}: newest log page {figures[s][READS[0]]:.2f} ms against a TaskList page {figures[s][READS[3]]:.2f} ms"
        for s in stores
    ]
    return [
        f"## History reads: a {tasks:,}-task plan with {events:,} recorded events",
        "",
        "Generated by `python -m bench.history_read` (in-process, median ms after a warm-up; the events are "
        "written in each store's own format). Target: the newest page of the log reads as fast as a TaskList "
        "page. Both are read again unchanged here, and both keep a page read for an unchanged plan (the file "
        "store's log page by the log's inode, size and time), so these are the reads a board or a watching "
        "agent repeats; TaskGet's last events come from the newest 256 KiB of the file store's log.",
        "",
        table(["read", *stores], rows),
        "",
        "; ".join(verdict) + ".",
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=10_000)
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--postgres", action="store_true", help="also on a throwaway PostgreSQL cluster")
    args = p.parse_args(argv)
    figures = history_reads(args.tasks, args.events, args.runs, args.postgres)
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
