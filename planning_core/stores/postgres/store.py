"""The PostgreSQL store: the same plans, shared by servers on many hosts.

One row per plan (name, plan.md, archived, the high-water mark, a version bumped by every
write) and one per task (its exact JSON document). Every write is one database
transaction that starts by locking the plan's row, so writers of one plan are serialised
across hosts and the planner's checks (cycles, claims, blocked starts) see the committed
graph. The schema is created by `prepare` (schema.py); connections and what a lost one
means: db.py; the change feed: feed.py; shared sessions: sessions.py.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import psycopg

from ... import history as plan_history
from ...caller import NOBODY
from ...errors import CorruptTask, PlanArchived, PlanBusy, PlanNotFound, TaskNotFound
from ...models import PlanSnapshot, PlanSummary, Task
from ...names import check_plan_name, claim_plan_name
from ...store import DEFAULT_LOCK_TIMEOUT, PlanArchiveCheck, PlanContended, PlanRecord, PlanVersion
from ..staging import plan_snapshot
from ..urls import redact
from ..views import KeptViews
from . import copying, feed, history, schema, sessions
from .db import Conn, Database
from .plans import HEAD, Head, Parsed, PlanCache, head_of, head_title, parsed, version_view, write_tasks
from .schema import CHANNEL, PLANS, TASKS
from .txn import PostgresTransaction


class PostgresStore:
    """Plans in a PostgreSQL database (see the module docstring)."""

    def __init__(self, url: str, lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> None:
        self.url = url
        self.lock_timeout = lock_timeout
        self.db = Database(url)
        self.cache = PlanCache()
        self._views = KeptViews()
        # Sessions have a pool of their own: a tool call holds its session's row (and so a
        # connection) for the whole call, and its plan reads and writes need another one.
        # Sharing one pool, POOL_MAX calls at once would hold every connection and wait
        # for one more. It keeps one connection once used (a server of HTTP clients):
        # under a connection limit, the plans' pool must not take the last one in a burst.
        self.sessions = sessions.SessionTable(Database(url, min_size=1, name="planning-mcp-sessions"), lock_timeout)
        self._ready = False
        self._ready_lock = threading.Lock()

    # -- setup -----------------------------------------------------------------------

    def describe(self) -> str:
        return redact(self.url)

    def prepare(self) -> None:
        """Create or migrate the schema (one direct connection: its failure names the
        host), then open the pool."""
        with self._ready_lock:
            if self._ready:
                return
            with self.db.connect() as conn:
                schema.migrate(conn, self.db.where)
            self.db.pool()
            self._ready = True

    def close(self) -> None:
        self.db.close()
        self.sessions.db.close()

    def _read(self, doing: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        self.prepare()
        return self.db.read(doing, lambda conn: conn.execute(sql, params).fetchall())

    # -- plans -----------------------------------------------------------------------

    def _names(self, archived: bool) -> list[str]:
        rows = self._read("listing plans", f"SELECT name FROM {PLANS} WHERE archived = %s ORDER BY name", (archived,))
        return [str(r[0]) for r in rows]

    def active_plans(self) -> list[str]:
        return self._names(False)

    def archived_plans(self) -> list[str]:
        return self._names(True)

    def _head(self, name: str) -> Head:
        check_plan_name(name)
        head = head_of(next(iter(self._read(f"reading plan {name}", HEAD, (name,))), None))
        if head is None:
            raise PlanNotFound(name, self.active_plans())
        return head

    def is_archived(self, name: str) -> bool:
        return self._head(name).archived

    def location(self, name: str) -> str:
        self._head(name)
        return f"{redact(self.url)}#{name}"

    title_of = staticmethod(head_title)

    def title(self, name: str) -> str:
        return self.title_of(self._head(name))

    def plan_versions(self) -> dict[str, PlanVersion]:
        rows = self._read("listing plans", f"SELECT name, archived, version FROM {PLANS}")
        return {str(n): PlanVersion(bool(a), int(v)) for n, a, v in rows}

    def changes(self, stop: threading.Event, wait: float) -> Iterator[set[str]]:
        self.prepare()
        return feed.changes(self.db, stop, wait)

    # -- reading ---------------------------------------------------------------------

    def read_plan_md(self, name: str) -> str:
        check_plan_name(name)
        rows = self._read(f"reading plan {name}", f"SELECT plan_md FROM {PLANS} WHERE name = %s", (name,))
        if not rows:
            raise PlanNotFound(name, self.active_plans())
        return str(rows[0][0])

    def _load(self, name: str) -> tuple[Head, Parsed]:
        """The plan row and its parsed tasks: two statements on one connection, the
        second only when the plan changed since this store last parsed it."""
        check_plan_name(name)
        self.prepare()

        def run(conn: Conn) -> tuple[Head | None, Parsed | None]:
            head = head_of(conn.execute(HEAD, (name,)).fetchone())
            return head, (self.cache.load(conn, head) if head is not None else None)

        head, tasks = self.db.read(f"reading plan {name}", run)
        if head is None or tasks is None:
            raise PlanNotFound(name, self.active_plans())
        return head, tasks

    def _snapshot(self, head: Head, tasks: Parsed, *, copy: bool) -> PlanSnapshot:
        mine = {i: t.clone() if copy else t for i, t in tasks.tasks.items()}
        return plan_snapshot(head.name, self.title_of(head), head.archived, mine, tasks.corrupt)

    def snapshot(self, name: str) -> PlanSnapshot:
        head, tasks = self._load(name)
        return self._snapshot(head, tasks, copy=True)

    def view(self, name: str) -> PlanSnapshot:
        """snapshot() sharing the parsed tasks: callers must not change them. Made once
        per version of the plan (and per title and state: both are in the key), by moving
        the plan's last view on by the tasks that changed (views.PlanView): the parse of a
        new version keeps every unchanged task object."""
        head, tasks = self._load(name)
        return self.view_of(head, tasks)

    def view_of(self, head: Head, tasks: Parsed) -> PlanSnapshot:
        """The view of the plan `head` names as `tasks` hold it (one per version)."""
        return version_view(self._views, head, tasks)

    def summary(self, name: str) -> PlanSummary:
        return self.view(name).summary()

    def get_task(self, name: str, task_id: int) -> Task:
        check_plan_name(name)
        sql = f"SELECT p.name, t.doc FROM {PLANS} p LEFT JOIN {TASKS} t ON t.plan = p.name AND t.id = %s "
        sql += "WHERE p.name = %s"
        rows = self._read(f"reading plan {name}", sql, (task_id, name))
        if not rows:
            raise PlanNotFound(name, self.active_plans())
        doc = rows[0][1]
        if doc is None:
            raise TaskNotFound(name, [task_id])
        entry = parsed(task_id, str(doc))
        if isinstance(entry, Task):
            return entry
        raise CorruptTask(name, task_id, entry.file, entry.reason)

    # -- writing ---------------------------------------------------------------------

    def _lock(self, conn: Conn, name: str, queue: bool) -> Head:
        """Begin a write of the plan: its row locked (at most lock_timeout s of waiting).
        Not `queue`d: a row another transaction holds is waited out with a share lock,
        which takes nothing from the writers queued for it and is granted to every such
        waiter at once, then PlanContended (the caller looks at the committed plan again)."""
        timeout = f"SET LOCAL lock_timeout = '{int(self.lock_timeout * 1000)}ms'"
        conn.execute(timeout)
        try:
            head = head_of(conn.execute(HEAD + (" FOR UPDATE" if queue else " FOR UPDATE NOWAIT"), (name,)).fetchone())
        except psycopg.errors.LockNotAvailable:
            if queue:
                raise PlanBusy(name, self.lock_timeout) from None
            self._wait_out(conn, name, timeout)
            raise PlanContended(name) from None
        if head is None:  # the active names from this connection: the pool may have no other free
            rows = conn.execute(f"SELECT name FROM {PLANS} WHERE NOT archived ORDER BY name").fetchall()
            raise PlanNotFound(name, [str(r[0]) for r in rows])
        return head

    def _wait_out(self, conn: Conn, name: str, timeout: str) -> None:
        """Until the transaction holding the plan's row ends (NOWAIT's refusal ended ours)."""
        conn.execute(f"ROLLBACK; BEGIN; {timeout}")
        try:
            conn.execute(f"SELECT 1 FROM {PLANS} WHERE name = %s FOR SHARE", (name,))
        except psycopg.errors.LockNotAvailable:
            raise PlanBusy(name, self.lock_timeout) from None

    @contextlib.contextmanager
    def _writing(self, name: str, by: str, queue: bool = True) -> Iterator[PostgresTransaction]:
        check_plan_name(name)
        self.prepare()
        with self.db.write(f"writing plan {name}", lambda conn: self._lock(conn, name, queue)) as (conn, head):
            if head.archived:
                raise PlanArchived(name)
            locked = self.cache.load(conn, head)
            txn = PostgresTransaction(conn, head, locked, self._views, by)
            yield txn
            fresh = txn.flush()
        if fresh is not None:
            self.cache.keep(name, fresh)  # committed: the next read here needs no query

    def transaction(self, name: str, by: str = NOBODY) -> contextlib.AbstractContextManager[PostgresTransaction]:
        return self._writing(name, by)

    def try_transaction(self, name: str, by: str = NOBODY) -> contextlib.AbstractContextManager[PostgresTransaction]:
        return self._writing(name, by, queue=False)

    def archive(self, name: str, check: PlanArchiveCheck, by: str = NOBODY) -> str:
        with self._writing(name, by) as txn:
            check(txn.snapshot())
            txn.archiving = True
        return name

    def create_plan(self, date: str, slug: str, plan_md: str, tasks: list[Task], by: str = NOBODY) -> str:
        """The plan row and every task in one transaction: all or nothing. The name is the
        first of <date>-<slug>, <date>-<slug>-2, ... that no plan (active or archived) has."""
        self.prepare()
        docs = {t.id: t.to_json() for t in tasks}
        high = max((t.id for t in tasks), default=0)
        with self.db.write(f"creating plan {date}-{slug}", lambda conn: None) as (conn, _):

            def claim(name: str) -> bool:
                row = conn.execute(
                    f"INSERT INTO {PLANS} (name, plan_md, high_water) VALUES (%s, %s, %s) "
                    "ON CONFLICT (name) DO NOTHING RETURNING name",
                    (name, plan_md, high),
                ).fetchone()
                return row is not None

            name = claim_plan_name(date, slug, claim)
            write_tasks(conn, name, docs, 1)
            history.record(conn, name, 1, plan_history.plan_created(len(tasks), by))
            conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, name))
        return name

    # -- optional abilities ------------------------------------------------------------

    def task_events(self, name: str, task_id: int, limit: int) -> list[plan_history.Logged]:
        self._head(name)
        return self.db.read(f"reading plan {name}", lambda c: history.task_events(c, name, task_id, limit))

    def plan_events(
        self, name: str, limit: int, cursor: str | None = None
    ) -> tuple[list[plan_history.Logged], str | None]:
        self._head(name)
        return self.db.read(f"reading plan {name}", lambda c: history.page(c, name, limit, cursor))

    def events_since(self, since: str, limit: int) -> list[plan_history.Logged]:
        self.prepare()
        return self.db.read("reading the history", lambda c: history.since(c, since, limit))

    def edit_session(self, key: str) -> contextlib.AbstractContextManager[dict[str, Any]]:
        self.prepare()
        return self.sessions.edit(key)

    def export_plans(self) -> Iterator[PlanRecord]:
        self.prepare()
        return copying.export_plans(self.db)

    def import_plan(self, record: PlanRecord) -> bool:
        self.prepare()
        return copying.import_plan(self.db, record, self.lock_timeout)
