"""The change feed: LISTEN on a connection of its own.

Every write sends `pg_notify(CHANNEL, <plan name>)` inside its transaction, so the
notification is delivered when (and only if) the write commits, to every server
listening, on any host. A notification sent while the listener is disconnected is lost:
the feed keeps trying to LISTEN again (a restart, a failover: the first attempts are
refused while the database shuts down and starts), waiting longer after each failure up to
`wait`, and once it listens again it yields ANY_PLAN, so the caller tells at once every plan
whose version moved meanwhile. Until then it yields an empty set at least every `wait` s.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import psycopg

from ...errors import DatabaseUnreachable, StorageError
from ...store import ANY_PLAN, BURST_MAX, BURST_QUIET
from .db import Conn, Database
from .schema import CHANNEL

STOP_POLL = 0.25  # seconds: how often a quiet wait looks at `stop`
FIRST_RETRY = 0.25  # seconds before the first attempt to LISTEN again; doubled after each failure, up to `wait`


def _listen(db: Database, wait: float) -> Conn:
    conn = db.connect(connect_timeout=max(2, int(wait)))  # libpq's least is 2 s
    try:
        conn.execute(f"LISTEN {CHANNEL}")
    except psycopg.errors.ReadOnlySqlTransaction as e:
        # A standby (a URL whose hosts are tried in any order, or a primary demoted in a
        # failover): it hears no writes, so this is retried like a lost connection.
        conn.close()
        raise DatabaseUnreachable(db.where, f"the change feed reached a standby ({e})") from None
    except psycopg.Error:
        conn.close()
        raise
    return conn


def _close(conn: Conn | None) -> None:
    if conn is not None:
        with contextlib.suppress(psycopg.Error):
            conn.close()


def _heard(conn: Conn, stop: threading.Event, deadline: float) -> set[str]:
    """The names notified before `deadline`: a first one, then the rest of its burst (until
    BURST_QUIET s pass with none, at most BURST_MAX s after the first)."""
    names: set[str] = set()
    while not names and not stop.is_set() and (left := deadline - time.monotonic()) > 0:
        names.update(n.payload for n in conn.notifies(timeout=min(left, STOP_POLL), stop_after=1))
    burst_end = time.monotonic() + BURST_MAX
    while names and (left := burst_end - time.monotonic()) > 0:
        more = {n.payload for n in conn.notifies(timeout=min(left, BURST_QUIET), stop_after=1)}
        if not more:
            break
        names |= more
    return names


def changes(db: Database, stop: threading.Event, wait: float) -> Iterator[set[str]]:
    """Names of plans written (by any server) since the last yield; an empty set after
    `wait` s without one; ANY_PLAN once listening again after the connection was lost.
    Ends when `stop` is set. DatabaseUnreachable (a StorageError) when the first LISTEN
    cannot be made: the caller polls instead."""
    conn: Conn | None = _listen(db, wait)
    retry = FIRST_RETRY
    try:
        while not stop.is_set():
            deadline = time.monotonic() + wait
            names: set[str] = set()
            while not names and not stop.is_set() and time.monotonic() < deadline:
                try:
                    if conn is None:
                        conn = _listen(db, wait)
                        names.add(ANY_PLAN)  # what was sent while deaf is lost: look at every plan
                        retry = FIRST_RETRY
                    else:
                        names = _heard(conn, stop, deadline)
                except (psycopg.Error, StorageError):
                    # Lost (or refused while the database restarts): LISTEN again on a new
                    # connection after a pause that grows with each failure, up to `wait`.
                    _close(conn)
                    conn = None
                    stop.wait(min(retry, max(0.0, deadline - time.monotonic())))
                    retry = min(retry * 2, wait)
            yield names
    finally:
        _close(conn)
