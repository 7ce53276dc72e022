"""The PostgreSQL store's half of `Copyable`: every plan out as a PlanRecord, and a
PlanRecord in as a plan, exactly (the task documents are stored as their text, so what
comes in goes out byte for byte).

Each plan is read in one REPEATABLE READ transaction (its row and its tasks from one
snapshot) and written in one transaction (all or nothing). Task documents are text: a
record whose document is not UTF-8, or holds a NUL (which PostgreSQL text cannot), is
refused whole rather than stored changed.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg

from ...errors import DatabaseUnreachable, PlanBusy, PlanExists, PlanningError, PlanNotStorable
from ...names import MAX_TASK_ID, check_plan_name
from ...store import MAX_COPIED_PLAN_BYTES, PlanRecord
from ...taskdoc import task_filename
from . import history
from .db import Conn, Database
from .plans import write_tasks
from .schema import CHANNEL, PLANS, TASKS


def export_plans(db: Database) -> Iterator[PlanRecord]:
    """Every plan, active and archived, oldest first (names begin with their date). One
    that cannot be read comes with `unreadable` set; the others still follow."""
    listed = db.read("listing plans", lambda c: c.execute(f"SELECT name FROM {PLANS} ORDER BY name").fetchall())
    names = [str(r[0]) for r in listed]
    for name in names:
        try:
            record = db.read(f"copying plan {name}", lambda c, n=name: _read(c, n))  # type: ignore[misc]
        except DatabaseUnreachable:
            raise  # the whole store, not this plan: every other would wait as long
        except PlanningError as e:
            record = PlanRecord(name, False, "", 0, unreadable=str(e))
        if record is not None:
            yield record


def _read(conn: Conn, name: str) -> PlanRecord | None:
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        size = conn.execute(
            f"SELECT coalesce(sum(octet_length(doc)), 0) FROM {TASKS} WHERE plan = %s", (name,)
        ).fetchone()
        if size is not None and int(size[0]) > MAX_COPIED_PLAN_BYTES:  # never fetched: memory stays bounded
            row = conn.execute(f"SELECT archived FROM {PLANS} WHERE name = %s", (name,)).fetchone()
            reason = (
                f"its task documents hold {int(size[0]):,} bytes, more than the {MAX_COPIED_PLAN_BYTES:,} "
                "a copy reads of one plan"
            )
            return PlanRecord(name, bool(row and row[0]), "", 0, unreadable=reason)
        return _read_in(conn, name)


def _texts(record: PlanRecord) -> dict[int, str]:
    """The task documents as the text the database keeps; PlanNotStorable when one is not
    text (PostgreSQL's text holds UTF-8 without NUL): refused whole, never stored changed."""
    texts: dict[int, str] = {}
    for task_id, data in sorted(record.tasks.items()):
        if not 1 <= task_id <= MAX_TASK_ID:
            raise PlanNotStorable(record.name, f"task id {task_id} is out of range 1..{MAX_TASK_ID}")
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as e:
            raise PlanNotStorable(
                record.name,
                f"task {task_id}'s document ({task_filename(task_id)}) is not UTF-8 text (byte {e.start:,} is "
                f"0x{bytes(data)[e.start]:02x}), and PostgreSQL keeps task documents as text",
            ) from None
        if "\0" in text:
            raise PlanNotStorable(
                record.name,
                f"task {task_id}'s document ({task_filename(task_id)}) holds a NUL byte, which PostgreSQL text cannot",
            )
        texts[task_id] = text
    return texts


def import_plan(db: Database, record: PlanRecord, lock_timeout: float) -> bool:
    """Store the plan as recorded. False when a plan of that name is stored exactly so
    (nothing written); PlanExists when a different one is (nothing written)."""
    name = check_plan_name(record.name)
    if not 0 <= record.high_water <= MAX_TASK_ID:
        raise PlanNotStorable(name, f"high-water mark {record.high_water} is out of range")
    texts = _texts(record)
    high = max(record.high_water, *texts, 0)
    wanted = PlanRecord(name, record.archived, record.plan_md, high, {i: t.encode() for i, t in texts.items()})

    def begin(conn: Conn) -> PlanRecord | None:
        conn.execute(f"SET LOCAL lock_timeout = '{int(lock_timeout * 1000)}ms'")
        try:
            conn.execute(f"SELECT 1 FROM {PLANS} WHERE name = %s FOR UPDATE", (name,))
        except psycopg.errors.LockNotAvailable:
            raise PlanBusy(name, lock_timeout) from None
        return _read_in(conn, name)

    with db.write(f"copying plan {name} in", begin) as (conn, have):
        if have is not None:
            if have == wanted:
                return False
            raise PlanExists(name)
        row = conn.execute(
            f"INSERT INTO {PLANS} (name, plan_md, archived, archived_at, high_water) "
            "VALUES (%s, %s, %s, CASE WHEN %s THEN now() END, %s) ON CONFLICT (name) DO NOTHING RETURNING name",
            (name, wanted.plan_md, wanted.archived, wanted.archived, high),
        ).fetchone()
        if row is None:  # another copy inserted it after our lock found nothing: compare with it
            if _read_in(conn, name) == wanted:
                return False
            raise PlanExists(name)
        write_tasks(conn, name, texts, 1)
        history.record_all(conn, name, record.history)
        conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, name))
    return True


def _read_in(conn: Conn, name: str) -> PlanRecord | None:
    """The plan as stored, read in the caller's transaction."""
    row = conn.execute(f"SELECT archived, plan_md, high_water FROM {PLANS} WHERE name = %s", (name,)).fetchone()
    if row is None:
        return None
    tasks = conn.execute(f"SELECT id, doc FROM {TASKS} WHERE plan = %s ORDER BY id", (name,)).fetchall()
    docs = {int(i): str(d).encode() for i, d in tasks}
    return PlanRecord(name, bool(row[0]), str(row[1]), int(row[2]), docs, history=history.read_entries(conn, name))
