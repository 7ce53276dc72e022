"""The change feed: LISTEN on a connection of its own.

Every write sends `pg_notify(CHANNEL, <plan name>)` inside its transaction, so the
notification is delivered when (and only if) the write commits, to every server
listening, on any host. A notification sent while the listener is disconnected is lost:
after a reconnect the feed yields an empty set, and the caller's comparison of
plan_versions at each yield (at least every `wait` seconds) catches up.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import psycopg

from ...errors import DatabaseUnreachable
from .db import Conn, Database
from .schema import CHANNEL

STOP_POLL = 0.25  # seconds: how often a quiet wait looks at `stop`
BURST = 0.02  # seconds: after a first notification, others of the same burst join it


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


def changes(db: Database, stop: threading.Event, wait: float) -> Iterator[set[str]]:
    """Names of plans written (by any server) since the last yield; an empty set after
    `wait` s without one. Ends when `stop` is set. DatabaseUnreachable (a StorageError)
    when the first LISTEN cannot be made: the caller polls instead."""
    conn: Conn | None = _listen(db, wait)
    try:
        while not stop.is_set():
            names: set[str] = set()
            deadline = time.monotonic() + wait
            try:
                if conn is None:
                    conn = _listen(db, wait)
                while not names and not stop.is_set() and (left := deadline - time.monotonic()) > 0:
                    names.update(n.payload for n in conn.notifies(timeout=min(left, STOP_POLL), stop_after=1))
                if names:
                    names.update(n.payload for n in conn.notifies(timeout=BURST))
            except (psycopg.OperationalError, DatabaseUnreachable):
                if conn is not None:  # lost: LISTEN again on a new connection at the next turn
                    with contextlib.suppress(psycopg.Error):
                        conn.close()
                    conn = None
                stop.wait(max(0.0, deadline - time.monotonic()))  # the retry's pace, not a handshake
            yield names
    finally:
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                conn.close()
