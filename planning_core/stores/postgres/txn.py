"""The PostgreSQL store's PlanTransaction.

It runs inside one database transaction that began by locking the plan's row
(`SELECT ... FOR UPDATE`): every server on every host that writes the plan takes that
lock first, so while we hold it the committed tasks are the plan, and everything read
here (through the store's parsed cache, brought up to the locked version) is current.
Changes are staged and written by `flush` at the end, with the version bump and the
NOTIFY, in the same transaction and in one statement (the row is held for the lock's
round trip, a read of the tasks changed since this server last read the plan if any,
the write's, and COMMIT's): all of them commit, or none.
"""

from __future__ import annotations

from ...errors import CorruptTask, TaskNotFound
from ...history import Entry
from ...history import archived as archived_entry
from ...models import CorruptFile, PlanSnapshot, Task, TaskStatus
from ..staging import CommittedPlan, MarkedTransaction
from ..views import KeptViews
from . import history
from .db import Conn
from .plans import UPSERT_TASKS, Head, Parsed, head_title, parsed, upsert_params, version_view
from .schema import CHANNEL, PLANS, TASKS


class PostgresTransaction(MarkedTransaction):
    def __init__(self, conn: Conn, head: Head, tasks: Parsed, views: KeptViews, by: str) -> None:
        super().__init__(head.name, max(head.high_water, max(tasks.entries, default=0)), by)
        self._conn = conn
        self._head = head
        self._parsed = tasks
        self._views = views  # the store's views, shared by its reads
        self.archiving = False  # set by PostgresStore.archive: the flush marks the plan archived

    def _shared_view(self) -> PlanSnapshot:
        return version_view(self._views, self._head, self._parsed)  # the plan as locked: this version's view

    def _committed(self, task_id: int) -> Task:
        entry = self._parsed.entries.get(task_id)
        if entry is None:
            raise TaskNotFound(self.name, [task_id])
        if isinstance(entry, CorruptFile):
            raise CorruptTask(self.name, task_id, entry.file, entry.reason)
        return entry.clone()

    def _committed_exists(self, task_id: int) -> bool:
        return task_id in self._parsed.entries

    def _committed_plan(self) -> CommittedPlan:
        tasks = {i: t.clone() for i, t in self._parsed.tasks.items()}
        return CommittedPlan(head_title(self._head), tasks, self._parsed.corrupt)

    def all_completed(self) -> bool:
        for task_id, entry in self._parsed.entries.items():
            if task_id in self._staged:
                continue
            if not isinstance(entry, Task) or entry.status is not TaskStatus.COMPLETED:
                return False  # an unreadable task is not known to be done
        return all(t.status is TaskStatus.COMPLETED for t in self._staged.values() if t is not None)

    def _write_statement(
        self, version: int, docs: dict[int, str], gone: list[int], entry: Entry | None
    ) -> tuple[str, tuple[object, ...]]:
        """The write as one statement, one round trip while the plan's row is locked: the
        tasks, the removals, the history entry (it commits with the change, or neither
        does), the version, and the NOTIFY (delivered at COMMIT)."""
        parts: list[str] = []
        params: list[object] = []
        if docs:
            parts.append(f"written AS ({UPSERT_TASKS} RETURNING 1)")
            params += upsert_params(self.name, docs, version)
        if gone:
            parts.append(f"gone AS (DELETE FROM {TASKS} WHERE plan = %s AND id = ANY(%s) RETURNING 1)")
            params += (self.name, gone)
        if entry is not None and entry.events:
            parts.append(f"logged AS ({history.INSERT_ENTRY} RETURNING 1)")
            params += history.entry_params(self.name, version, entry)
        archived = ", archived = true, archived_at = now()" if self.archiving else ""
        sql = f"WITH {', '.join(parts)} " if parts else ""
        sql += f"UPDATE {PLANS} SET version = %s, high_water = greatest(high_water, %s){archived} WHERE name = %s "
        sql += "RETURNING pg_notify(%s, name)"
        return sql, (*params, version, self._high, self.name, CHANNEL)

    def flush(self) -> Parsed | None:
        """Write what was staged (still inside the transaction); the parsed tasks as of the
        new version, for the cache once committed. None when there was nothing to write."""
        if not self._staged and not self._issued and not self.archiving:
            return None  # nothing written: no version moves, nobody is told
        version = self._head.version + 1
        entry = self.staged_entry() or (archived_entry(self.by) if self.archiving else None)
        docs = {i: t.to_json() for i, t in self._staged.items() if t is not None}
        gone = [i for i, t in self._staged.items() if t is None]
        self._conn.execute(*self._write_statement(version, docs, gone, entry))
        # Each task as a reader will get it: parsed back from the document written.
        changes: dict[int, Task | CorruptFile | None] = {i: parsed(i, doc) for i, doc in docs.items()}
        changes.update(dict.fromkeys(gone))
        return self._parsed.with_changes(version, changes)
