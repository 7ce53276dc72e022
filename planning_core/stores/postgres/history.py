"""The PostgreSQL store's history: one row per event in `planning_history`, inserted in the
transaction of the write it records (so both commit or neither does), read newest first
by index (plan, id) and (plan, task, id): a page is one index range scan whatever the
log's length.

Rows of one entry share `entry` (the plan's version that wrote them, or the entry's
number for a copied plan) and are contiguous in `id` order, so a copy gets its entries
back. A row's `id` is the cursor (`<id>.0`, the shape every store's cursors have).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ...history import Entry, Event, Logged, parse_cursor
from .db import Conn
from .schema import HISTORY, PLANS

_COLUMNS = "id, plan, at, by, event"


# An entry's events, in order (contiguous ids): (plan, entry, at, by, tasks, events) as parameters.
INSERT_ENTRY = (
    f"INSERT INTO {HISTORY} (plan, entry, at, by, task, event) "
    "SELECT %s, %s, %s, %s, e.task, e.event "
    "FROM unnest(%s::integer[], %s::text[]) WITH ORDINALITY AS e (task, event, n) ORDER BY e.n"
)


def entry_params(plan: str, entry_no: int, entry: Entry) -> tuple[object, ...]:
    events = [json.dumps(e.to_dict(), ensure_ascii=False, separators=(",", ":")) for e in entry.events]
    return (plan, entry_no, entry.at, entry.by, [e.task for e in entry.events], events)


def record(conn: Conn, plan: str, entry_no: int, entry: Entry) -> None:
    """Insert the entry's events in the caller's (the write's) transaction: one statement."""
    if entry.events:
        conn.execute(INSERT_ENTRY, entry_params(plan, entry_no, entry))


def record_all(conn: Conn, plan: str, entries: Iterable[Entry]) -> None:
    for n, entry in enumerate(entries, 1):
        record(conn, plan, n, entry)


def _logged(rows: Iterable[tuple[Any, ...]]) -> list[Logged]:
    out = []
    for row_id, plan, at, by, event in rows:
        try:
            value = json.loads(str(event))
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(Logged(str(plan), str(at), str(by), Event.from_dict(value), cursor=f"{row_id}.0"))
    return out


def task_events(conn: Conn, plan: str, task_id: int, limit: int) -> list[Logged]:
    sql = f"SELECT {_COLUMNS} FROM {HISTORY} WHERE plan = %s AND task = %s ORDER BY id DESC LIMIT %s"
    return _logged(conn.execute(sql, (plan, task_id, limit)).fetchall())


def page(conn: Conn, plan: str, limit: int, cursor: str | None) -> tuple[list[Logged], str | None]:
    before = parse_cursor(cursor)[0] if cursor else None
    where = "plan = %s" + (" AND id < %s" if before is not None else "")
    params: tuple[Any, ...] = (plan, before, limit + 1) if before is not None else (plan, limit + 1)
    rows = conn.execute(f"SELECT {_COLUMNS} FROM {HISTORY} WHERE {where} ORDER BY id DESC LIMIT %s", params)
    found = _logged(rows.fetchall())
    more = len(found) > limit
    return found[:limit], found[limit - 1].cursor if more and limit else None


def since(conn: Conn, start: str, limit: int) -> list[Logged]:
    sql = (
        f"SELECT h.id, h.plan, h.at, h.by, h.event FROM {HISTORY} h JOIN {PLANS} p ON p.name = h.plan "
        "WHERE NOT p.archived AND h.at >= %s ORDER BY h.at DESC, h.id DESC LIMIT %s"
    )
    return _logged(conn.execute(sql, (start, limit)).fetchall())


def read_entries(conn: Conn, plan: str) -> list[Entry]:
    """The plan's entries, oldest first (a copy's history)."""
    rows = conn.execute(f"SELECT entry, at, by, event FROM {HISTORY} WHERE plan = %s ORDER BY id", (plan,))
    return list(_grouped(rows.fetchall()))


def _grouped(rows: list[tuple[Any, ...]]) -> Iterator[Entry]:
    current: Entry | None = None
    key: tuple[Any, ...] | None = None
    for entry_no, at, by, event in rows:
        try:
            value = json.loads(str(event))
        except ValueError:
            continue
        if current is None or key != (entry_no, at, by):
            if current is not None:
                yield current
            current, key = Entry(str(at), str(by), []), (entry_no, at, by)
        current.events.append(Event.from_dict(value if isinstance(value, dict) else {}))
    if current is not None:
        yield current
