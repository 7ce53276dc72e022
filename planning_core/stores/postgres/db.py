"""Connections to the database, and what a lost one means for the call that used it.

A pool (psycopg_pool, sync: the core runs in worker threads) hands out autocommit
connections. A connection killed by `pg_terminate_backend` or a server restart is found
dead by the first statement sent on it (a read, or a write's BEGIN), which is then sent
again on another: nothing of the caller's had been applied. (Checking each connection on
checkout costs a round trip per call, and the pool's own check waits a 1 s back-off after
the first dead one.) Transactions are spelt
out (BEGIN ... COMMIT) so that the one place where a lost connection leaves the outcome
unknown, the COMMIT, is told apart from the others:

- no connection to be had: DatabaseUnreachable (nothing was sent);
- lost before COMMIT was sent: the server rolls back; "not applied". The opening of a
  write (BEGIN, the plan's row lock) is retried on another connection: nothing of the
  caller's had been sent yet;
- lost during COMMIT: "unknown", never retried (the change may be committed);
- COMMIT answered without its synchronous standby's confirmation (a cancelled wait, or one
  past COMMIT_WAIT): DatabaseUnconfirmed, unknown as well (commits.py);
- lost during a read: retried on another connection (a read changes nothing).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Self, TypeVar

import psycopg
from psycopg import pq
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import TupleRow
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import (
    DatabaseAtLimit,
    DatabaseBusy,
    DatabaseLost,
    DatabaseRefused,
    DatabaseUnconfirmed,
    DatabaseUnreachable,
    StorageError,
)
from ..urls import DatabaseUrl
from . import commits

Conn = psycopg.Connection[TupleRow]
T = TypeVar("T")

POOL_MAX = 10  # connections per pool: the server's worker threads share them
# The most connections one server opens: its plans' pool and its sessions' pool (a tool
# call holds its session's row for the whole call, on a connection of the sessions' pool,
# and reads and writes its plan on one of the other), and a LISTEN for each follower of
# the change feed (the MCP notifications', and the board's while a page is open).
FEED_LISTENERS = 2
MAX_CONNECTIONS = 2 * POOL_MAX + FEED_LISTENERS
ATTEMPTS = POOL_MAX + 1  # every idle connection may be dead (a restart): then a new one
CHECKOUT_TIMEOUT = 5.0  # seconds a call waits for a connection before "unreachable"
# A connection unused this long is closed (one per period, down to the pool's minimum),
# so a burst's connections go back to the server instead of being kept: under a
# connection limit the other pool, or another server, needs them.
IDLE_SECONDS = 5.0
# A connect that keeps failing (the server at its limit) is given up after this, so the
# next call tries afresh at once instead of waiting out a back-off of minutes.
RECONNECT_SECONDS = CHECKOUT_TIMEOUT
# What PostgreSQL says when it is at a connection limit (SQLSTATE 53300, which libpq does
# not pass on for a refused connect): per role, per database, or the server's own.
LIMIT_REASONS = ("too many connections", "too many clients", "connection slots are reserved")
DIAGNOSE_TIMEOUT = 3  # seconds for the direct connect that finds out why
# Defaults for what the URL does not set: a link cut silently (no RST) fails a call in
# about 10 s instead of the kernel's 15 minutes of retransmissions.
CONNECT_DEFAULTS: dict[str, Any] = {
    "connect_timeout": 5,
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
    "tcp_user_timeout": 10_000,
    "application_name": "planning-mcp",
}
# SQLSTATEs that mean the connection is gone: class 08, and the server shutting it
# (57P01 admin_shutdown: pg_terminate_backend or a fast shutdown; 57P02 crash; 57P03 starting).
LOST_STATES = ("57P01", "57P02", "57P03")


def is_lost(conn: Conn | None, error: BaseException) -> bool:
    """Did `error` come from the connection going away (rather than the server refusing)?
    Any psycopg error counts when the connection is no longer usable."""
    if not isinstance(error, psycopg.Error):
        return False
    if conn is not None and (conn.broken or conn.closed or conn.pgconn.status == pq.ConnStatus.BAD):
        return True
    if conn is not None and conn.info.transaction_status == pq.TransactionStatus.UNKNOWN:
        return True
    state = error.sqlstate or ""
    return isinstance(error, psycopg.OperationalError) and (state.startswith("08") or state in LOST_STATES)


def reason_of(error: BaseException, password: str | None) -> str:
    """psycopg's message on one line, without the password should it ever appear."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text.replace(password, "***") if password else text


class PoolConnection(psycopg.Connection[TupleRow]):
    """A pool's connection. A connect the database refused for its connection limit is
    remembered (by URL), so that a call that then waited in vain for a connection says
    so, and not "a failover or restart?", though the limit is free again by the time it
    looks (a burst over the limit on a slow machine)."""

    at_limit: ClassVar[dict[str, psycopg.OperationalError]] = {}  # URL: the last refusal for the limit

    @classmethod
    def connect(cls, conninfo: str = "", **kwargs: Any) -> Self:
        try:
            conn = super().connect(conninfo, **kwargs)
        except psycopg.OperationalError as e:
            if any(said in str(e) for said in LIMIT_REASONS):
                cls.at_limit[conninfo] = e.with_traceback(None)
            raise
        cls.at_limit.pop(conninfo, None)
        return conn


class Database:
    """The pool of one store, and the rules above. `where` names it for people."""

    def __init__(self, url: str, *, min_size: int = 1, name: str = "planning-mcp") -> None:
        self.url = url
        self.min_size, self.name = min_size, name
        self.commit_wait = commits.COMMIT_WAIT
        try:
            params = conninfo_to_dict(url)
        except psycopg.ProgrammingError as e:
            raise StorageError("the database URL", reason_of(e, None)) from None
        parsed = DatabaseUrl.parse(url)
        self.password = parsed.secret
        self.where = parsed.where
        self.kwargs = {k: v for k, v in CONNECT_DEFAULTS.items() if k not in params}
        self._pool: ConnectionPool[Conn] | None = None
        self._lock = threading.Lock()
        self._count = threading.Lock()
        self._in_use = 0  # connections handed out: all of them busy is DatabaseBusy, else unreachable

    # -- connections -------------------------------------------------------------------

    def connect(self, **extra: Any) -> Conn:
        """A connection of its own (migrations, the change feed's LISTEN); autocommit."""
        try:
            return psycopg.connect(self.url, autocommit=True, **{**self.kwargs, **extra})
        except psycopg.OperationalError as e:
            reason = reason_of(e, self.password)
            if any(said in reason for said in LIMIT_REASONS):
                raise DatabaseAtLimit(self.where, reason, MAX_CONNECTIONS) from None
            raise DatabaseUnreachable(self.where, reason) from None

    def pool(self) -> ConnectionPool[Conn]:
        with self._lock:
            if self._pool is None:
                self._pool = ConnectionPool(
                    self.url,
                    connection_class=PoolConnection,
                    min_size=self.min_size,
                    max_size=POOL_MAX,
                    kwargs={"autocommit": True, **self.kwargs},
                    timeout=CHECKOUT_TIMEOUT,
                    max_idle=IDLE_SECONDS,
                    reconnect_timeout=RECONNECT_SECONDS,
                    reconnect_failed=_try_again_later,
                    name=self.name,
                    open=False,
                )
                self._pool.open(wait=False)
            return self._pool

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def unreachable(self) -> DatabaseUnreachable | DatabaseBusy:
        """Why no connection can be had: one direct attempt tells (refused, unknown host,
        bad password), else every connection of the pool stayed in use, else the pool could
        not connect for a while (a failover: the database is back just now)."""
        try:
            self.connect(connect_timeout=DIAGNOSE_TIMEOUT).close()
        except DatabaseUnreachable as e:
            return e
        refused = PoolConnection.at_limit.get(self.url)
        if refused is not None and self._in_use < POOL_MAX:  # the pool's last connect was refused for the limit
            return DatabaseAtLimit(self.where, reason_of(refused, self.password), MAX_CONNECTIONS)
        if self._in_use < POOL_MAX:  # the pool could not connect, though a direct attempt now can
            return DatabaseUnreachable(
                self.where, f"no connection could be made for {CHECKOUT_TIMEOUT:g}s (a failover or restart?)"
            )
        return DatabaseBusy(self.where, POOL_MAX, CHECKOUT_TIMEOUT)

    @contextlib.contextmanager
    def connection(self) -> Iterator[Conn]:
        pool = self.pool()
        try:
            conn = pool.getconn()
        except PoolTimeout:
            raise self.unreachable() from None
        with self._count:
            self._in_use += 1
        try:
            yield conn
        finally:
            with self._count:
                self._in_use -= 1
            pool.putconn(conn)

    def lost(self, doing: str, outcome: str, error: BaseException) -> DatabaseLost:
        return DatabaseLost(self.where, doing, outcome, reason_of(error, self.password))

    # -- reads and writes ----------------------------------------------------------------

    def read(self, doing: str, run: Callable[[Conn], T]) -> T:
        """run(conn), sent again on another connection while the one used was lost."""
        for attempt in range(1, ATTEMPTS + 1):
            with self.connection() as conn:
                try:
                    return run(conn)
                except psycopg.OperationalError as e:
                    if not is_lost(conn, e):
                        raise DatabaseRefused(self.where, doing, reason_of(e, self.password)) from None
                    if attempt == ATTEMPTS:
                        raise self.lost(doing, "read", e) from None
        raise AssertionError("unreachable")  # pragma: no cover

    @contextlib.contextmanager
    def write(self, doing: str, begin: Callable[[Conn], T]) -> Iterator[tuple[Conn, T]]:
        """One transaction: BEGIN, begin(conn) (e.g. take a row lock), the block, COMMIT.
        An exception from the block rolls back. See the module docstring for failures."""
        for attempt in range(1, ATTEMPTS + 1):
            with self.connection() as conn:
                try:
                    conn.execute("BEGIN")
                    opened = begin(conn)
                except psycopg.OperationalError as e:
                    _rollback(conn)
                    if is_lost(conn, e) and attempt < ATTEMPTS:
                        continue  # nothing of the caller's was sent: another connection may do
                    raise self._refused(conn, doing, e) from None
                except BaseException:
                    _rollback(conn)
                    raise
                try:
                    yield conn, opened
                except psycopg.Error as e:
                    _rollback(conn)
                    raise self._refused(conn, doing, e) from None
                except BaseException:
                    _rollback(conn)
                    raise
                try:
                    commits.commit(conn, self.commit_wait)
                except commits.Unconfirmed as e:
                    raise DatabaseUnconfirmed(self.where, doing, reason_of(e, self.password)) from None
                except psycopg.Error as e:
                    if is_lost(conn, e):
                        raise self.lost(doing, "unknown", e) from None
                    _rollback(conn)
                    raise self._refused(conn, doing, e) from None
                return

    def _refused(self, conn: Conn, doing: str, error: psycopg.Error) -> StorageError:
        """The transaction did not commit: lost (not applied), or refused by the server.
        A connection that cannot answer a trivial query now was lost, whatever it said."""
        if is_lost(conn, error) or not _usable(conn):
            return self.lost(doing, "not applied", error)
        return DatabaseRefused(self.where, doing, reason_of(error, self.password))


def _try_again_later(pool: ConnectionPool[Conn]) -> None:
    """A connect given up (RECONNECT_SECONDS): the pool stays open and the next call that
    needs a connection tries again (psycopg_pool's default is the same; said here)."""


def _rollback(conn: Conn) -> None:
    with contextlib.suppress(psycopg.Error):
        if not conn.broken and not conn.closed:
            conn.execute("ROLLBACK")


def _usable(conn: Conn) -> bool:
    try:
        conn.execute("SELECT 1")
    except psycopg.Error:
        with contextlib.suppress(psycopg.Error):
            conn.close()  # so that the pool drops it
        return False
    return True
