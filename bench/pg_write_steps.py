"""How long a write holds its plan's row on PostgreSQL, and how many statements it sends
meanwhile: TaskUpdate (an edit), a claim (taskId "next") and its completion, N of each
through the planner on a throwaway cluster (tests.support.pg). Statements are counted
at the psycopg connection (Connection.execute and Cursor.executemany: each one round trip
or more); "under the lock" counts from the `FOR UPDATE` that takes the row to the COMMIT
that frees it, both included; the hold time is measured between the same two points.

Usage: python -m bench.pg_write_steps [N]   (needs PLANNING_MCP_PG_BIN or Debian's layout)"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import psycopg

from planning_core import Planner
from planning_core.stores import open_store
from tests.support.pg import fresh_database_url


class Tally:
    """Statements and row-lock hold times, from psycopg's own calls."""

    def __init__(self) -> None:
        self.statements = self.locked = 0
        self.held_since: float | None = None
        self.holds: list[float] = []

    def saw(self, sql: object) -> None:
        text = str(sql)
        self.statements += 1
        if "FOR UPDATE" in text:
            self.held_since = time.perf_counter()
        if self.held_since is not None:
            self.locked += 1
            if text.strip().upper() in ("COMMIT", "ROLLBACK"):
                self.holds.append(time.perf_counter() - self.held_since)
                self.held_since = None


def instrument(tally: Tally) -> None:
    execute, executemany = psycopg.Connection.execute, psycopg.Cursor.executemany

    def counted_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        tally.saw(query)
        return execute(self, query, *args, **kwargs)

    def counted_executemany(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        tally.saw(query)
        return executemany(self, query, *args, **kwargs)

    psycopg.Connection.execute = counted_execute  # type: ignore[method-assign]
    psycopg.Cursor.executemany = counted_executemany  # type: ignore[method-assign]


def measure(tally: Tally, name: str, n: int, call: Callable[[int], object]) -> None:
    tally.statements = tally.locked = 0
    tally.holds.clear()
    times = []
    for k in range(n):
        start = time.perf_counter()
        call(k)
        times.append(time.perf_counter() - start)
    holds = sorted(tally.holds)
    print(
        f"{name}: {tally.statements / n:.1f} statements a call, {tally.locked / n:.1f} under the row lock; "
        f"row held median {statistics.median(holds) * 1000:.2f} ms, p90 {holds[int(len(holds) * 0.9)] * 1000:.2f} ms; "
        f"call median {statistics.median(times) * 1000:.2f} ms"
    )


def main(n: int) -> None:
    store = open_store(fresh_database_url())
    store.prepare()
    planner = Planner(store)
    plan = planner.create_plan(
        "Steps", analysis="a", approach="b", tasks=[{"subject": f"t{i}"} for i in range(1, 2 * n + 2)]
    ).name
    tally = Tally()
    instrument(tally)
    measure(tally, "TaskUpdate (edit)", n, lambda k: planner.update_task(plan, 1, description=f"edit {k}"))
    claim = {"status": "in_progress"}
    measure(tally, 'claim (taskId "next")', n, lambda k: planner.update_task(plan, "next", owner=f"agent-{k}", **claim))
    measure(tally, "completion", n, lambda k: planner.update_task(plan, n + 2 + k, status="completed"))
    store.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
