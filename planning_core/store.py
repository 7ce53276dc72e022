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
- `History`: what each write changed, read back (planning_core/history.py records it).

The seam holds protocols and records only and imports no backend: `open_store(url)`,
which picks one, is the composition root's (planning_core/stores/__init__.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from .caller import NOBODY

if TYPE_CHECKING:  # the seam names them; loading them is the stores' business (the hook counts rounds without)
    from .history import Entry, Logged
    from .models import PlanSnapshot, PlanSummary, Task

PlanArchiveCheck = Callable[["PlanSnapshot"], None]
"""Called under the plan's lock before archiving; raises to refuse."""

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

    def view(self) -> PlanSnapshot:
        """snapshot() without copying every task where the backend can (its tasks must not
        be changed): the whole plan read under the lock, as cheaply as a query reads it."""
        ...

    def read_tasks(self) -> Iterable[Task]:
        """Every task as the transaction sees it (staged changes included), read-only and,
        where the backend shares its view, not copied; `blocks` as stored, not derived: for
        checks that read statuses and parents (a parent's parts) on every write."""
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

    def create_plan(self, date: str, slug: str, plan_md: str, tasks: list[Task], by: str = NOBODY) -> str:
        """Create the plan with its tasks, all or nothing. Returns the name used
        (`<date>-<slug>`, or with -2, -3, … when taken). `by`: the writer its history names."""
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

    def transaction(self, name: str, by: str = NOBODY) -> AbstractContextManager[PlanTransaction]:
        """The plan locked for one write; `by`: the writer its history entry names."""
        ...

    def archive(self, name: str, check: PlanArchiveCheck, by: str = NOBODY) -> str:
        """Archive the plan under its lock after `check` passes (`by`: as for transaction)."""
        ...

    def plan_versions(self) -> dict[str, PlanVersion]:
        """Every plan (active and archived) with a version that changes whenever the
        plan may have changed, on this process or another: for watchers that poll."""
        ...


# -- optional abilities ---------------------------------------------------------------


# What a change feed yields, among the names, when it may have missed changes (it heard
# nothing for a while: a lost LISTEN connection, made again): every plan whose version
# moved is told at once. No plan is named so (names are lower-case letters, digits, dashes).
ANY_PLAN = "*"


# A change feed tells a burst of writes once: the burst is over after BURST_QUIET seconds
# with no change, or BURST_MAX seconds after its first, whichever comes first. Every
# follower of every server asks the store what moved each time it is told (a statement on
# a database), so a team writing steadily is told five times a second, not once per write.
BURST_QUIET = 0.02
BURST_MAX = 0.2


@runtime_checkable
class ChangeFeed(Protocol):
    def changes(self, stop: threading.Event, wait: float) -> Iterator[set[str]]:
        """Names of plans that may have changed, as soon as the backend learns of it
        (ANY_PLAN: any of them, after the feed was deaf for a while).
        Yields (maybe an empty set) at least every `wait` seconds, so that the caller can
        compare plan_versions (a change made before the feed began) and see `stop`; ends
        when `stop` is set. Raises StorageError when it cannot watch: the caller polls."""
        ...


class PlanContended(Exception):
    """A claim's try_transaction found the plan held by another writer: it waited until
    that writer was done, without taking the plan. Never reaches a user: the claim looks at
    the committed plan again (the writer may have taken what it wanted) before it asks again."""


@runtime_checkable
class TriesLock(Protocol):
    def try_transaction(self, name: str, by: str = NOBODY) -> AbstractContextManager[PlanTransaction]:
        """transaction(), except that a plan another writer holds is not queued for:
        PlanContended once that writer is done (PlanBusy after the store's lock timeout, as
        transaction()). For claims, so that the agents one change wakes do not each take
        the plan in turn to find that the first took the task they saw ready."""
        ...


@runtime_checkable
class Recoverable(Protocol):
    def recover(self, by: str = NOBODY) -> list[str]:
        """Repair what a crash or a hand edit left (never fatal). Returns one line per
        thing done or left, for the server's log. `by`: as for transaction."""
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


@runtime_checkable
class History(Protocol):
    """The plans' history, recorded by the store with each write it records."""

    def task_events(self, name: str, task_id: int, limit: int) -> list[Logged]:
        """The task's last `limit` events, newest first (within the kept history)."""
        ...

    def plan_events(self, name: str, limit: int, cursor: str | None = None) -> tuple[list[Logged], str | None]:
        """A page of the plan's events, newest first, from `cursor` (None: the newest);
        and the cursor of the next page (None: no older events). Raises PlanNotFound, and
        InvalidInput for a cursor this store never gave."""
        ...

    def events_since(self, since: str, limit: int) -> list[Logged]:
        """The events of every active plan at or after `since` (UTC, ISO 8601), newest
        first, at most `limit`."""
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
    # The plan's history, oldest first (History): copied along, never compared (a second
    # copy of an unchanged plan writes nothing).
    history: list[Entry] = field(default_factory=list, compare=False)


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
