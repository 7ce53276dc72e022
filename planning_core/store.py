"""The seam: the storage interface the planner, the server and the CLI are written against.

A backend stores plans (a title and a plan.md text) and their tasks, and offers a
transaction per plan: everything read inside it is fresh, and everything staged is
written at once when it ends, with other writers of that plan shut out. Two protocols
make a backend (`PlanStore`, `PlanTransaction`); what only some backends can do is a
small optional protocol, checked with `isinstance` (the way beads keeps a small storage
interface and a few optional ones):

- `ChangeFeed`: "tell me when plan X may have changed" (files: the OS watcher;
  PostgreSQL: LISTEN/NOTIFY). Without one, callers poll `plan_versions()`.
- `Recoverable`: repair after a crash, at start (files: temp files, staging folders,
  links to missing tasks).
- `SharedSessions`: per-session state kept in the store, for servers that share it.
- `PlanFolders`: a folder on this machine per plan (event hooks' `plan_dir`).
- `Copyable`: every plan out and in, exactly (`planning-mcp copy`).

`open_store(url)` picks the backend: a path or `file:` URL is the file store,
`memory:` the in-memory reference store, `postgresql://…` the database.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable
from urllib.parse import quote, unquote, urlsplit

from .models import PlanSnapshot, PlanSummary, Task

PlanArchiveCheck = Callable[[PlanSnapshot], None]
"""Called under the plan's lock before archiving; raises to refuse."""

log = logging.getLogger("planning_mcp")

STORE_ENV = "PLANNING_MCP_STORE"
DEFAULT_LOCK_TIMEOUT = 10.0  # seconds a write waits for a plan held by another writer, then PlanBusy
SESSION_IDLE_SECONDS = 24 * 3600.0  # a stored session unused this long is forgotten (SharedSessions)


class PlanVersion(NamedTuple):
    """Where a plan is and a value that changes whenever it may have changed."""

    archived: bool
    stamp: Hashable


class PlanTransaction(Protocol):
    """A locked view of one active plan. Changes are staged and written on exit."""

    name: str

    def get(self, task_id: int) -> Task:
        """The task as it is now. Raises TaskNotFound or CorruptTask."""
        ...

    def exists(self, task_id: int) -> bool: ...

    def next_id(self) -> int:
        """Issue a new id, never issued before in this plan."""
        ...

    def put(self, task: Task) -> None: ...

    def delete(self, task_id: int) -> None: ...

    def snapshot(self) -> PlanSnapshot:
        """Every task of the plan, including changes staged so far."""
        ...

    def all_completed(self) -> bool:
        """Is every task (staged changes included) completed and readable?"""
        ...


class PlanStore(Protocol):
    def describe(self) -> str:
        """Where the plans are, for people: a folder, or a URL without its password."""
        ...

    def prepare(self) -> None:
        """Make the store ready to write (create the layout or the schema); raise
        StorageError naming the place when it cannot be."""
        ...

    def close(self) -> None:
        """Release connections, watches and threads. The store is not used after."""
        ...

    def active_plans(self) -> list[str]:
        """Names of plans in progress, oldest first."""
        ...

    def archived_plans(self) -> list[str]: ...

    def is_archived(self, name: str) -> bool:
        """True if archived, False if active; raises PlanNotFound otherwise."""
        ...

    def location(self, name: str) -> str:
        """Where the plan is, as this backend names it (`done/<name>` for files,
        `postgresql://host/db#<name>` for the database). Raises PlanNotFound."""
        ...

    def title(self, name: str) -> str:
        """The plan's title (plan.md's first heading), cheaply. Raises PlanNotFound."""
        ...

    def create_plan(self, date: str, slug: str, plan_md: str, tasks: list[Task]) -> str:
        """Create the plan with its tasks, all or nothing. Returns the name used
        (`<date>-<slug>`, or with -2, -3, … when taken)."""
        ...

    def read_plan_md(self, name: str) -> str: ...

    def snapshot(self, name: str) -> PlanSnapshot: ...

    def view(self, name: str) -> PlanSnapshot:
        """snapshot() without copying every task: the tasks must not be changed."""
        ...

    def summary(self, name: str) -> PlanSummary:
        """What snapshot(name).summary() gives, as cheaply as the backend can."""
        ...

    def get_task(self, name: str, task_id: int) -> Task: ...

    def transaction(self, name: str) -> AbstractContextManager[PlanTransaction]: ...

    def archive(self, name: str, check: PlanArchiveCheck) -> str:
        """Archive the plan under its lock after `check` passes."""
        ...

    def plan_versions(self) -> dict[str, PlanVersion]:
        """Every plan (active and archived) with a version that changes whenever the
        plan may have changed, on this process or another: for watchers that poll."""
        ...


# -- optional abilities ---------------------------------------------------------------


@runtime_checkable
class ChangeFeed(Protocol):
    def changes(self, stop: threading.Event, wait: float) -> Iterator[set[str]]:
        """Names of plans that may have changed, as soon as the backend learns of it.
        Yields (maybe an empty set) at least every `wait` seconds, so that the caller can
        compare plan_versions (a change made before the feed began) and see `stop`; ends
        when `stop` is set. Raises StorageError when it cannot watch: the caller polls."""
        ...


@runtime_checkable
class Recoverable(Protocol):
    def recover(self) -> list[str]:
        """Repair what a crash or a hand edit left (never fatal). Returns one line per
        thing done or left, for the server's log."""
        ...


@runtime_checkable
class SharedSessions(Protocol):
    def edit_session(self, key: str) -> AbstractContextManager[dict[str, Any]]:
        """The stored state of one client session (an empty dict when new), saved when
        the block ends without an error. Edits of one key are serialised across every
        server sharing the store; sessions unused for long are forgotten."""
        ...


HOOKS_DIR = ".hooks"  # under a PlanFolders root: the Claude Code hook's per-session state


@runtime_checkable
class PlanFolders(Protocol):
    root: Path
    """The folder holding every plan's folder; our tools keep their own files under it
    (the Claude Code hook's HOOKS_DIR)."""

    def plan_folder(self, name: str) -> Path:
        """The plan's folder on this machine. Raises PlanNotFound."""
        ...

    def root_mistake(self, *, creating: bool) -> str | None:
        """Why `root` is likely not the folder meant (a project folder holding its own
        `.planning`, a folder of other files, missing parent folders), phrased to follow
        the folder's path; None when it is fine. `creating`: before writing the layout."""
        ...


@dataclass
class PlanRecord:
    """One plan exactly as stored, for copying between stores."""

    name: str
    archived: bool
    plan_md: str
    high_water: int  # the highest id ever issued (ids are never reused)
    tasks: dict[int, bytes] = field(default_factory=dict)  # id -> the stored JSON document, as is
    # What the source holds of this plan but could not put in the record, one "entry:
    # reason" each (a FIFO where a task file should be): said, never dropped silently.
    left_behind: tuple[str, ...] = field(default=(), compare=False)
    # Set when the plan could not be read at all: why. The record then holds nothing to copy.
    unreadable: str | None = None


# The most task-document bytes one plan's record holds in memory: a copy's memory is
# bounded by this, whatever its files claim to hold (twelve sparse 60 MB files once took a
# copy to 825 MiB). Real plans are far below (a task file the server writes is < 300 KB).
MAX_COPIED_PLAN_BYTES = 64 * 1024 * 1024


@runtime_checkable
class Copyable(Protocol):
    def export_plans(self) -> Iterator[PlanRecord]:
        """Every plan, active and archived, oldest first. A plan that cannot be read is
        yielded with `unreadable` set (the others still follow); what could not be put in
        a record is named in its `left_behind`. At most MAX_COPIED_PLAN_BYTES of task
        documents per record."""
        ...

    def import_plan(self, record: PlanRecord) -> bool:
        """Store the plan as given. False when it is already stored exactly so (nothing
        is written); raises PlanExists when a different plan has that name."""
        ...


# -- choosing a backend ---------------------------------------------------------------

DATABASE_SCHEMES = ("postgresql", "postgres")
MEMORY_URL = "memory:"


def is_database_url(url: str) -> bool:
    return urlsplit(url).scheme in DATABASE_SCHEMES


MULTI_HOST_ATTRS = ("target_session_attrs", "read-write")  # several hosts: connect to the primary only
DEFAULT_PORT = "5432"


def is_secret_param(key: str) -> bool:
    """libpq's secret connection parameters (password, sslpassword): never printed."""
    return key.lower().endswith("password")


@dataclass(frozen=True)
class DatabaseUrl:
    """A `postgresql://` URL taken apart without resolving it, in libpq's forms: one host
    or several (`u:pw@h1:p1,h2:p2/db`), `[ipv6]`, and `?host=`/`?port=`/`?dbname=`, which
    win over the URL's own parts as in libpq. Any text parses (psycopg judges it when
    connecting); `problem` says what is plainly wrong."""

    text: str  # the URL as given
    scheme: str
    user: str
    password: str | None
    hosts: tuple[tuple[str, str], ...]  # (host, port as written; "" for the default)
    path: str
    query: tuple[tuple[str, str | None], ...]  # key, value (None: no "=")

    @classmethod
    def parse(cls, url: str) -> DatabaseUrl:
        scheme, _, rest = url.partition("://")
        rest, _, query_text = rest.partition("?")
        rest = rest.split("#", 1)[0]
        netloc, slash, path = rest.partition("/")
        userinfo, _, hostlist = netloc.rpartition("@")
        user, colon, password = userinfo.partition(":")
        query = tuple(
            (k, v if sep else None) for k, sep, v in (item.partition("=") for item in query_text.split("&") if item)
        )
        return cls(
            url,
            scheme,
            unquote(user),
            unquote(password) if colon else None,
            tuple(_host_port(spec) for spec in hostlist.split(",")) if hostlist else (),
            slash + path,
            query,
        )

    def param(self, key: str) -> str | None:
        found = [v for k, v in self.query if k == key]
        return found[-1] if found else None

    @property
    def secret(self) -> str | None:
        """The password, from the URL or its query, to be scrubbed from messages."""
        return self.param("password") or self.password

    @property
    def servers(self) -> list[tuple[str, str]]:
        """(host, port) of every server libpq will try, in order."""
        hosts_param, ports_param = self.param("host"), self.param("port")
        hosts = [h for h, _ in self.hosts] if hosts_param is None else unquote(hosts_param).split(",")
        ports = [p for _, p in self.hosts] if ports_param is None else unquote(ports_param).split(",")
        if len(ports) == 1:
            ports = ports * len(hosts)
        ports += [""] * (len(hosts) - len(ports))
        return [(h or "localhost", p or DEFAULT_PORT) for h, p in zip(hosts or [""], ports or [""], strict=False)]

    @property
    def several_hosts(self) -> bool:
        return len(self.servers) > 1

    @property
    def dbname(self) -> str:
        return self.param("dbname") or unquote(self.path[1:]) or self.param("user") or self.user or "(default)"

    @property
    def where(self) -> str:
        """For people: `plans on db:5432`, `plans on h1:5432,h2:5433`; never a password."""
        return f"{self.dbname} on {','.join(f'{h}:{p}' for h, p in self.servers)}"

    def problem(self) -> str | None:
        if not self.hosts and self.param("host") is None:
            return "names no host"
        for _, port in self.servers:
            if not port.isdigit() or not 0 < int(port) < 65536:
                return f"has the port {port!r}, which is not a number from 1 to 65535"
        return None

    def shown(self) -> str:
        """The URL with every secret (`user:pw@`, `?password=`, `?sslpassword=`) as ***."""
        userinfo = ""
        if self.user or self.password is not None:
            userinfo = quote(self.user, safe="") + (":***" if self.password is not None else "") + "@"
        hostlist = ",".join(h + (f":{p}" if p else "") for h, p in self.hosts)
        query = "&".join(k if v is None else f"{k}=***" if is_secret_param(k) else f"{k}={v}" for k, v in self.query)
        return f"{self.scheme}://{userinfo}{hostlist}{self.path}" + (f"?{query}" if query else "")

    def with_param(self, key: str, value: str) -> str:
        """The URL with `key=value` added to its query."""
        base, _, fragment = self.text.partition("#")
        joined = base + ("&" if "?" in base else "?") + f"{key}={value}"
        return joined + (f"#{fragment}" if fragment else "")


def _host_port(spec: str) -> tuple[str, str]:
    if spec.startswith("["):  # [ipv6]:port
        host, _, after = spec.partition("]")
        return host + "]", after.removeprefix(":")
    host, _, port = spec.partition(":")
    return unquote(host), port


def redact(url: str) -> str:
    """The URL with every secret replaced by ***: safe to print (DatabaseUrl.shown)."""
    return DatabaseUrl.parse(url).shown() if is_database_url(url) else url


def database_url(url: str) -> str:
    """The URL a database store connects with: several hosts get
    target_session_attrs=read-write unless the URL says otherwise, so that the pools and
    the change feed only ever reach the primary (and find the new one after a failover)."""
    parsed = DatabaseUrl.parse(url)
    key, value = MULTI_HOST_ATTRS
    if not parsed.several_hosts or parsed.param(key) is not None:
        return url
    log.warning("the store URL %s names several hosts: connecting with %s=%s", parsed.shown(), key, value)
    return parsed.with_param(key, value)


def open_store(url: str | Path, *, lock_timeout: float | None = None) -> PlanStore:
    """The store a `--store` value names: a path or `file:` URL (the file store),
    `memory:` (in-memory, this process only), `postgresql://…` (the database). Nothing
    is created or connected until the store is used (`prepare` checks that it can be)."""
    text = str(url)
    if is_database_url(text):
        from .stores.postgres import PostgresStore

        text = database_url(text)
        return PostgresStore(text) if lock_timeout is None else PostgresStore(text, lock_timeout=lock_timeout)
    if text == MEMORY_URL or text.startswith(MEMORY_URL + "//"):
        from .stores.memory import MemoryStore

        return MemoryStore() if lock_timeout is None else MemoryStore(lock_timeout=lock_timeout)
    from .stores.files import FileStore

    path = Path(urlsplit(text).path) if text.startswith("file:") else Path(text)
    return FileStore(path) if lock_timeout is None else FileStore(path, lock_timeout=lock_timeout)
