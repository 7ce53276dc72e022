"""Per-session state in the database (`SharedSessions`), so that a client whose requests
alternate between servers keeps one todo list, one current plan and one reminder clock.

One row per session key, its state as JSON text. An edit locks the row for its whole
block (`SELECT ... FOR UPDATE`, the row inserted first when missing), so two calls of one
session on two servers take turns; the state is written back when the block ends without
an error. Sessions unused for SESSION_IDLE_SECONDS are deleted now and then (at most once
per SWEEP_SECONDS per store, by the edit that finds it due).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg

from ...errors import SessionBusy
from ...store import SESSION_IDLE_SECONDS
from .db import Conn, Database
from .schema import SESSIONS

SWEEP_SECONDS = 3600.0


class SessionTable:
    def __init__(self, db: Database, lock_timeout: float) -> None:
        self.db = db
        self.lock_timeout = lock_timeout
        self._next_sweep = 0.0
        self._sweep_lock = threading.Lock()

    def _lock(self, conn: Conn, key: str) -> dict[str, Any]:
        conn.execute(f"SET LOCAL lock_timeout = '{int(self.lock_timeout * 1000)}ms'")
        select = f"SELECT state FROM {SESSIONS} WHERE key = %s FOR UPDATE"
        try:
            row = conn.execute(select, (key,)).fetchone()
            if row is None:  # a new session: make the row, then lock it like any other
                conn.execute(f"INSERT INTO {SESSIONS} (key, state) VALUES (%s, '{{}}') ON CONFLICT DO NOTHING", (key,))
                row = conn.execute(select, (key,)).fetchone()
        except psycopg.errors.LockNotAvailable:
            raise SessionBusy(self.lock_timeout) from None
        try:
            state = json.loads(str(row[0])) if row else {}
        except ValueError:
            state = {}  # edited by hand into something else: start the session afresh
        return state if isinstance(state, dict) else {}

    @contextlib.contextmanager
    def edit(self, key: str) -> Iterator[dict[str, Any]]:
        with self.db.write("saving the session's state", lambda conn: self._lock(conn, key)) as (conn, state):
            yield state
            conn.execute(
                f"UPDATE {SESSIONS} SET state = %s, updated_at = now() WHERE key = %s",
                (json.dumps(state, ensure_ascii=False), key),
            )
        self._sweep()

    def _sweep(self) -> None:
        now = time.monotonic()
        with self._sweep_lock:
            if now < self._next_sweep:
                return
            self._next_sweep = now + SWEEP_SECONDS
        with contextlib.suppress(Exception):  # housekeeping: never worth failing a call
            self.db.read(
                "forgetting idle sessions",
                lambda conn: conn.execute(
                    f"DELETE FROM {SESSIONS} WHERE updated_at < now() - make_interval(secs => %s)",
                    (SESSION_IDLE_SECONDS,),
                ),
            )
