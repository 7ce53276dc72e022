"""Reading a plan's tasks from the database, kept parsed per store between writes.

Each plan row has a version bumped by every write, and each task row the version that
last wrote it (`written_in`). A read first asks for the plan's version (one small row);
when it is the version already parsed, nothing more is read. Otherwise one query brings
the documents written since the parsed version and the plan's task count (every document
the first time, or when a task was deleted since), so a change by another server costs one
document, not a row per task.

The version is read before the tasks. The tasks may then be newer than that version
(a write committed in between), never older: the parse is labelled with the older
version, and the next read fetches again what changed after it. Nothing stale is served.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from ...models import CorruptFile, PlanSnapshot, Task
from ...names import plan_title
from ...taskdoc import parse_task, task_filename
from ..views import KeptViews
from .db import Conn
from .schema import PLANS, TASKS


def parsed(task_id: int, doc: str) -> Task | CorruptFile:
    """The stored document read by the file store's rule; a bad one is reported as a bad
    file is (named as the file it would be in a copy to files)."""
    loaded = parse_task(doc, task_id)
    if isinstance(loaded, Task):
        return loaded
    return CorruptFile(task_id=task_id, file=task_filename(task_id), reason=loaded)


# Insert or replace task documents: (plan, version, ids, docs) as parameters.
UPSERT_TASKS = (
    f"INSERT INTO {TASKS} (plan, id, doc, written_in) "
    "SELECT %s, id, doc, %s FROM unnest(%s::integer[], %s::text[]) AS d (id, doc) "
    "ON CONFLICT (plan, id) DO UPDATE SET doc = EXCLUDED.doc, written_in = EXCLUDED.written_in"
)


def upsert_params(plan: str, docs: dict[int, str], version: int) -> tuple[object, ...]:
    return (plan, version, list(docs), list(docs.values()))


def write_tasks(conn: Conn, plan: str, docs: dict[int, str], version: int) -> None:
    """Insert or replace the documents, in one statement (one round trip; no executemany
    pipeline, whose failure on a dead connection reads like a refusal)."""
    if docs:
        conn.execute(UPSERT_TASKS, upsert_params(plan, docs, version))


@dataclass(frozen=True)
class Head:
    """The plan row, without its tasks."""

    name: str
    archived: bool
    version: int
    high_water: int
    title_text: str  # plan.md's first 1,000 characters: all names.plan_title looks at


def head_title(head: Head) -> str:
    """The plan's title (names.plan_title) from its row."""
    return plan_title(head.title_text, head.name)


HEAD = f"SELECT name, archived, version, high_water, left(plan_md, 1000) FROM {PLANS} WHERE name = %s"


def head_of(row: tuple[Any, ...] | None) -> Head | None:
    if row is None:
        return None
    return Head(str(row[0]), bool(row[1]), int(row[2]), int(row[3]), str(row[4]))


@dataclass(frozen=True)
class Parsed:
    """A plan's tasks as of `version` (or a little newer). Never changed once made."""

    version: int
    entries: dict[int, Task | CorruptFile]  # by id, in id order
    memo: dict[str, Any] = field(default_factory=dict)  # what is derived, made once

    @property
    def tasks(self) -> dict[int, Task]:
        return {i: e for i, e in self.entries.items() if isinstance(e, Task)}

    @property
    def corrupt(self) -> list[CorruptFile]:
        return [e for e in self.entries.values() if isinstance(e, CorruptFile)]

    def with_changes(self, version: int, changes: dict[int, Task | CorruptFile | None]) -> Parsed:
        entries = dict(self.entries)
        top = next(reversed(entries), 0)
        in_order = True
        for i, e in sorted(changes.items()):
            if e is None:
                entries.pop(i, None)
            elif i in entries or i > top:  # replaced in place, or a new id above every other
                entries[i] = e
                top = max(top, i)
            else:
                entries[i] = e
                in_order = False
        # Sorted again only when an id came in below the highest: a write is O(changes), not O(plan).
        return Parsed(version, entries if in_order else dict(sorted(entries.items())))


class PlanCache:
    """The parsed tasks of each plan this store has read, shared by its threads."""

    def __init__(self) -> None:
        self._plans: dict[str, Parsed] = {}
        self._lock = threading.Lock()

    def forget(self, name: str) -> None:
        with self._lock:
            self._plans.pop(name, None)

    def get(self, name: str) -> Parsed | None:
        with self._lock:
            return self._plans.get(name)

    def keep(self, name: str, fresh: Parsed) -> None:
        with self._lock:
            kept = self._plans.get(name)
            if kept is None or kept.version <= fresh.version:
                self._plans[name] = fresh

    def load(self, conn: Conn, head: Head) -> Parsed:
        """The plan's tasks as of head.version or newer: from the cache when it is there,
        else the cached parse moved on by what was written since, else read whole."""
        kept = self.get(head.name)
        if kept is not None and kept.version >= head.version:
            return kept  # newer is as good: a write of ours committed since the head was read
        fresh = _caught_up(conn, head, kept) if kept is not None else None
        if fresh is None:
            rows = conn.execute(f"SELECT id, doc FROM {TASKS} WHERE plan = %s ORDER BY id", (head.name,)).fetchall()
            fresh = Parsed(head.version, {task_id: parsed(task_id, doc) for task_id, doc in rows})
        self.keep(head.name, fresh)
        return fresh


# The documents written since a version, and (id NULL) how many tasks the plan has: one snapshot.
CHANGED_SINCE = (
    f"SELECT id, doc FROM {TASKS} WHERE plan = %s AND written_in > %s "
    f"UNION ALL SELECT NULL, count(*)::text FROM {TASKS} WHERE plan = %s"
)


def _caught_up(conn: Conn, head: Head, kept: Parsed) -> Parsed | None:
    """`kept` moved on to head.version (or newer) by the documents written since its
    version: a change by another server costs its documents, not a row per task. Every
    task not written since is in `kept`, so the plan's count differs from the result's
    only when a task was deleted since: None then (the caller reads the plan whole)."""
    changes: dict[int, Task | CorruptFile | None] = {}
    total = -1
    for task_id, doc in conn.execute(CHANGED_SINCE, (head.name, kept.version, head.name)).fetchall():
        if task_id is None:
            total = int(doc)
        else:
            changes[task_id] = parsed(task_id, doc)
    fresh = kept.with_changes(head.version, changes)
    return fresh if len(fresh.entries) == total else None


def version_view(views: KeptViews, head: Head, tasks: Parsed) -> PlanSnapshot:
    """The view of the plan `head` names as `tasks` hold it (one per version)."""
    name = head.name
    key = f"view:{head.archived}:{head.title_text}"
    kept = tasks.memo.get(key)
    if isinstance(kept, PlanSnapshot):
        return kept
    with views.lock:
        kept = tasks.memo.get(key)  # another thread may have made it meanwhile
        if isinstance(kept, PlanSnapshot):
            return kept
        made = views.of(name).view(name, head_title(head), head.archived, tasks.tasks, tasks.corrupt)
        tasks.memo[key] = made
    return made
