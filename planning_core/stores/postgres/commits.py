"""A COMMIT that PostgreSQL reports as done although its synchronous standby never confirmed it.

With a synchronous standby, COMMIT writes the change locally, then waits for the standby.
When that wait is cancelled (pg_cancel_backend, a client's cancel request), PostgreSQL
sends a WARNING ("canceling wait for synchronous replication") and answers COMMIT with
success: the change is on the primary only, and a failover may lose it. Nothing bounds the
wait either: with the only standby gone, COMMIT blocks while holding the plan's row lock.

So every COMMIT is sent with a notice handler that hears any WARNING (by its severity, not
its text, which a server may translate), and is watched: one that waits longer than its
bound is cancelled from a watcher thread, which ends the wait (the lock is released) and
makes the outcome unknown. A connection whose commit was cancelled is closed, so that a
late cancel request can never reach the next user of the connection.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field

import psycopg
from psycopg.errors import Diagnostic
from psycopg.rows import TupleRow

Conn = psycopg.Connection[TupleRow]

COMMIT_WAIT = 15.0  # seconds a COMMIT may wait (for its synchronous standby) before it is cancelled
CANCEL_TIMEOUT = 5.0  # seconds for the cancel request's own connection


@dataclass(eq=False)
class _Watched:
    conn: Conn
    deadline: float
    fired: bool = False
    cancelled: threading.Event = field(default_factory=threading.Event)


class CommitWatch:
    """One daemon thread per process that cancels the COMMITs past their deadline. It
    sleeps until the earliest deadline, and without a COMMIT in flight until one comes."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._watched: set[_Watched] = set()
        self._target = float("inf")  # the deadline the watcher sleeps until
        self._thread: threading.Thread | None = None

    def watch(self, conn: Conn, bound: float) -> _Watched:
        entry = _Watched(conn, time.monotonic() + bound)
        with self._cond:
            self._watched.add(entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="planning-mcp-commit-watch", daemon=True)
                self._thread.start()
            if entry.deadline < self._target:
                self._cond.notify()
        return entry

    def unwatch(self, entry: _Watched) -> bool:
        """True when the COMMIT was cancelled for being late (then its connection is closed)."""
        with self._cond:
            self._watched.discard(entry)
            fired = entry.fired
        if fired:
            entry.cancelled.wait(CANCEL_TIMEOUT)
            with contextlib.suppress(psycopg.Error):
                entry.conn.close()
        return fired

    def _run(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                late = [e for e in self._watched if e.deadline <= now]
                for entry in late:
                    entry.fired = True
                    self._watched.discard(entry)
                self._target = min((e.deadline for e in self._watched), default=float("inf"))
                if not late:
                    self._cond.wait(None if self._target == float("inf") else self._target - now)
                    continue
            for entry in late:
                with contextlib.suppress(psycopg.Error):
                    entry.conn.cancel_safe(timeout=CANCEL_TIMEOUT)
                entry.cancelled.set()


WATCH = CommitWatch()


class Unconfirmed(Exception):
    """COMMIT ended without the standby's confirmation; `reason` says how."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def commit(conn: Conn, bound: float) -> None:
    """COMMIT on `conn`. Raises Unconfirmed when PostgreSQL warned while committing or the
    wait outlived `bound` (the outcome is unknown); psycopg's errors otherwise."""
    warnings: list[str] = []

    def heard(notice: Diagnostic) -> None:
        if notice.severity_nonlocalized == "WARNING":
            warnings.append(notice.message_primary or "a warning")

    conn.add_notice_handler(heard)
    entry = WATCH.watch(conn, bound)
    try:
        conn.execute("COMMIT")
    except psycopg.Error as e:
        if WATCH.unwatch(entry):
            raise Unconfirmed(f"the commit waited over {bound:g}s and was cancelled: {e}") from None
        raise
    else:
        if WATCH.unwatch(entry):
            raise Unconfirmed(f"the commit waited over {bound:g}s for the synchronous standby and was cancelled")
    finally:
        if not conn.closed:
            conn.remove_notice_handler(heard)
    if warnings:
        raise Unconfirmed(f"PostgreSQL warned: {warnings[0]}")
