"""The in-memory store: the reference implementation of the seam, for fast tests.

Everything lives in this process and is gone when it ends. Its semantics are the file
store's: one writer per plan (a lock with the same timeout, then PlanBusy), changes
staged and applied only when the transaction's block ends without an exception, ids
never reused (a high-water mark per plan), archiving a state, the same plan names.
Each task is kept as the JSON document the file store would write (Task.to_json) and
read back from it, so what a reader gets is what a file would give, extra fields and
key order included.
"""

from __future__ import annotations

import contextlib
import copy
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .. import history
from ..caller import NOBODY
from ..errors import (
    PlanArchived,
    PlanBusy,
    PlanExists,
    PlanNotFound,
    PlanNotStorable,
    StorageError,
    TaskNotFound,
)
from ..models import PlanSnapshot, PlanSummary, Task, TaskStatus, summarize
from ..names import check_plan_name, claim_plan_name, plan_title
from ..store import DEFAULT_LOCK_TIMEOUT, SESSION_IDLE_SECONDS, PlanArchiveCheck, PlanRecord, PlanVersion
from ..taskdoc import validated_task
from .staging import CommittedPlan, MarkedTransaction, plan_snapshot

LOCATION_PREFIX = "memory:#"
MAX_ENTRIES = 100_000  # history entries kept per plan (the file store keeps about as many)


def _parse(name: str, task_id: int, doc: bytes) -> Task:
    try:
        task = validated_task(json.loads(doc))  # as every store reads a task document
    except (ValueError, ValidationError, RecursionError) as e:
        raise StorageError(f"plan {name}", f"task {task_id} is not a valid task document ({e})") from None
    if task.id != task_id:
        raise StorageError(f"plan {name}", f"task {task_id}'s document has id {task.id}")
    return task


@dataclass
class _Plan:
    plan_md: str
    archived: bool = False
    high_water: int = 0
    tasks: dict[int, Task] = field(default_factory=dict)  # read from docs; never changed in place
    docs: dict[int, bytes] = field(default_factory=dict)  # id -> the stored JSON document
    version: int = 0  # bumped on every write: PlanVersion's stamp, and the memo's key
    writer: threading.Lock = field(default_factory=threading.Lock)
    memo: dict[str, tuple[int, Any]] = field(default_factory=dict)
    # The history (History): (seq, entry), oldest first; the newest MAX_ENTRIES kept.
    log: list[tuple[int, history.Entry]] = field(default_factory=list)

    def record(self, entry: history.Entry) -> None:
        """Append an entry (the caller holds the store's lock, with the write it records)."""
        self.log.append((self.log[-1][0] + 1 if self.log else 1, entry))
        if len(self.log) > MAX_ENTRIES:
            del self.log[: len(self.log) - MAX_ENTRIES]

    def keep(self, name: str, task_id: int, doc: bytes) -> None:
        self.tasks[task_id] = _parse(name, task_id, doc)
        self.docs[task_id] = doc


class MemoryTransaction(MarkedTransaction):
    """The PlanTransaction of the memory store: staged changes over the plan as committed."""

    def __init__(self, name: str, plan: _Plan, store: MemoryStore, by: str) -> None:
        super().__init__(name, max(plan.high_water, max(plan.tasks, default=0)), by)
        self.plan = plan
        self._store = store

    def _committed(self, task_id: int) -> Task:
        with self._store._cond:
            task = self.plan.tasks.get(task_id)
        if task is None:
            raise TaskNotFound(self.name, [task_id])
        return task.clone()

    def _committed_exists(self, task_id: int) -> bool:
        with self._store._cond:
            return task_id in self.plan.tasks

    def _committed_plan(self) -> CommittedPlan:
        with self._store._cond:
            tasks = {i: t.clone() for i, t in sorted(self.plan.tasks.items())}
            plan_md = self.plan.plan_md
        return CommittedPlan(plan_title(plan_md, self.name), tasks)

    def all_completed(self) -> bool:
        with self._store._cond:
            committed = list(self.plan.tasks.values())
        staged = [t for t in self._staged.values() if t is not None]
        rest = [t for t in committed if t.id not in self._staged]
        return all(t.status is TaskStatus.COMPLETED for t in (*staged, *rest))

    def commit(self) -> None:
        if not self._staged and not self._issued:
            return  # nothing written: no version moves, nobody is told
        # Each task read back from its document, as a file store's reader would get it.
        docs = {i: t.to_json().encode() for i, t in self._staged.items() if t is not None}
        tasks = {i: _parse(self.name, i, doc) for i, doc in docs.items()}
        entry = self.staged_entry()
        with self._store._cond:
            plan = self.plan
            if entry is not None:
                plan.record(entry)
            for i in self._staged:
                if i in docs:
                    plan.tasks[i], plan.docs[i] = tasks[i], docs[i]
                else:
                    plan.tasks.pop(i, None)
                    plan.docs.pop(i, None)
            plan.high_water = max(plan.high_water, self._high)
            self._store._touch(plan)


class MemoryStore:
    """Plans in a dict of this process (see the module docstring)."""

    def __init__(self, lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> None:
        self.lock_timeout = lock_timeout
        # One condition guards every plan's committed state; the change feed waits on it.
        self._cond = threading.Condition(threading.Lock())
        self._plans: dict[str, _Plan] = {}
        self._seq = 0  # bumped on every write of any plan
        self._sessions: dict[str, tuple[float, dict[str, Any]]] = {}
        self._session_locks: dict[str, threading.Lock] = {}

    # -- setup -----------------------------------------------------------------

    def describe(self) -> str:
        return "memory: (this process only)"

    def prepare(self) -> None:
        pass  # nothing to create

    def close(self) -> None:
        pass  # nothing held: no connections, watches or threads

    # -- plans -------------------------------------------------------------------

    def _get(self, name: str) -> _Plan:
        check_plan_name(name)
        with self._cond:
            plan = self._plans.get(name)
        if plan is None:
            raise PlanNotFound(name, self.active_plans())
        return plan

    def _names(self, archived: bool) -> list[str]:
        with self._cond:
            return sorted(n for n, p in self._plans.items() if p.archived is archived)

    def _touch(self, plan: _Plan) -> None:
        """Record a write of `plan` (the caller holds _cond) and wake the change feeds."""
        plan.version += 1
        plan.memo.clear()
        self._seq += 1
        self._cond.notify_all()

    def active_plans(self) -> list[str]:
        return self._names(False)

    def archived_plans(self) -> list[str]:
        return self._names(True)

    def is_archived(self, name: str) -> bool:
        return self._get(name).archived

    def location(self, name: str) -> str:
        self._get(name)
        return f"{LOCATION_PREFIX}{name}"

    def title(self, name: str) -> str:
        return plan_title(self._get(name).plan_md, name)

    def plan_versions(self) -> dict[str, PlanVersion]:
        with self._cond:
            return {n: PlanVersion(p.archived, p.version) for n, p in self._plans.items()}

    def changes(self, stop: threading.Event, wait: float) -> Iterator[set[str]]:
        """The names written since the last yield; an empty set after `wait` s of quiet."""
        with self._cond:
            seen = {n: p.version for n, p in self._plans.items()}
            seq = self._seq
        while not stop.is_set():
            with self._cond:
                deadline = time.monotonic() + wait
                while self._seq == seq and (left := deadline - time.monotonic()) > 0:
                    self._cond.wait(left)
                now = {n: p.version for n, p in self._plans.items()}
                seq = self._seq
            yield {n for n, v in now.items() if seen.get(n) != v}
            seen = now

    # -- reading -------------------------------------------------------------------

    def read_plan_md(self, name: str) -> str:
        return self._get(name).plan_md

    def _snapshot(self, name: str, plan: _Plan, *, copy_tasks: bool) -> PlanSnapshot:
        with self._cond:
            tasks = {i: t.clone() if copy_tasks else t for i, t in sorted(plan.tasks.items())}
            archived = plan.archived
        return plan_snapshot(name, plan_title(plan.plan_md, name), archived, tasks)

    def snapshot(self, name: str) -> PlanSnapshot:
        return self._snapshot(name, self._get(name), copy_tasks=True)

    def _memo(self, plan: _Plan, key: str, make: Any) -> Any:
        with self._cond:
            version = plan.version
            hit = plan.memo.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        value = make()
        with self._cond:
            if plan.version == version:  # only if nothing was written while it was made
                plan.memo[key] = (version, value)
        return value

    def view(self, name: str) -> PlanSnapshot:
        """snapshot() sharing the stored tasks (never changed in place): callers must not
        change them. Made once per version of the plan."""
        plan = self._get(name)

        def make() -> PlanSnapshot:
            snap = self._snapshot(name, plan, copy_tasks=False)
            snap.keep_summary()
            return snap

        view: PlanSnapshot = self._memo(plan, "view", make)
        return view

    def summary(self, name: str) -> PlanSummary:
        plan = self._get(name)

        def make() -> PlanSummary:
            with self._cond:
                tasks, archived = list(plan.tasks.values()), plan.archived
            return summarize(name, plan_title(plan.plan_md, name), archived, tasks, 0)

        summary: PlanSummary = self._memo(plan, "summary", make)
        return summary

    def get_task(self, name: str, task_id: int) -> Task:
        plan = self._get(name)
        with self._cond:
            task = plan.tasks.get(task_id)
        if task is None:
            raise TaskNotFound(name, [task_id])
        return task.clone()

    # -- writing ---------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self, name: str, by: str = NOBODY) -> Iterator[MemoryTransaction]:
        plan = self._get(name)
        if plan.archived:
            raise PlanArchived(name)
        # Not reentrant, like the file store's flock: a nested transaction of one plan waits.
        if not plan.writer.acquire(timeout=self.lock_timeout):
            raise PlanBusy(name, self.lock_timeout)
        try:
            if plan.archived:  # archived while we waited for its lock
                raise PlanArchived(name)
            txn = MemoryTransaction(name, plan, self, by)
            yield txn
            txn.commit()
        finally:
            plan.writer.release()

    def create_plan(self, date: str, slug: str, plan_md: str, tasks: list[Task], by: str = NOBODY) -> str:
        plan = _Plan(plan_md=plan_md, high_water=max((t.id for t in tasks), default=0))
        plan.record(history.plan_created(len(tasks), by))
        for t in tasks:
            plan.keep(f"{date}-{slug}", t.id, t.to_json().encode())

        def claim(name: str) -> bool:
            if name in self._plans:
                return False
            self._plans[name] = plan
            self._touch(plan)
            return True

        with self._cond:
            return claim_plan_name(date, slug, claim)

    def archive(self, name: str, check: PlanArchiveCheck, by: str = NOBODY) -> str:
        with self.transaction(name, by) as txn:
            check(txn.snapshot())
            with self._cond:
                txn.plan.archived = True
                txn.plan.record(history.archived(by))
                self._touch(txn.plan)
        return name

    # -- copying (Copyable) ------------------------------------------------------------

    def export_plans(self) -> Iterator[PlanRecord]:
        with self._cond:
            plans = sorted(self._plans.items())
            records = [
                PlanRecord(n, p.archived, p.plan_md, p.high_water, dict(p.docs), history=[e for _, e in p.log])
                for n, p in plans
            ]
        yield from records

    def import_plan(self, record: PlanRecord) -> bool:
        check_plan_name(record.name)
        plan = _Plan(plan_md=record.plan_md, archived=record.archived, high_water=record.high_water)
        for entry in record.history:
            plan.record(entry)
        for task_id, doc in sorted(record.tasks.items()):
            try:
                plan.keep(record.name, task_id, bytes(doc))
            except StorageError:  # it keeps parsed tasks: a damaged document cannot be held as is
                raise PlanNotStorable(record.name, f"task {task_id}'s document is not a valid task") from None
        with self._cond:
            old = self._plans.get(record.name)
            if old is not None:
                same = (old.archived, old.plan_md, old.high_water, old.docs)
                if same == (plan.archived, plan.plan_md, plan.high_water, plan.docs):
                    return False
                raise PlanExists(record.name)
            self._plans[record.name] = plan
            self._touch(plan)
        return True

    # -- history (History) ----------------------------------------------------------------

    def _log(self, name: str) -> list[tuple[int, history.Entry]]:
        plan = self._get(name)
        with self._cond:
            return list(reversed(plan.log))

    def task_events(self, name: str, task_id: int, limit: int) -> list[history.Logged]:
        return history.task_of(name, self._log(name), task_id, limit)

    def plan_events(self, name: str, limit: int, cursor: str | None = None) -> tuple[list[history.Logged], str | None]:
        return history.page_of(name, self._log(name), limit, cursor)

    def events_since(self, since: str, limit: int) -> list[history.Logged]:
        found = (e for n in self.active_plans() for e in history.since_of(n, self._log(n), since, limit))
        return history.newest(found, limit)

    # -- sessions (SharedSessions) -------------------------------------------------------

    @contextlib.contextmanager
    def edit_session(self, key: str) -> Iterator[dict[str, Any]]:
        with self._cond:
            lock = self._session_locks.setdefault(key, threading.Lock())
        with lock:
            now = time.monotonic()
            with self._cond:
                for k, (used, _) in list(self._sessions.items()):
                    if now - used > SESSION_IDLE_SECONDS:
                        del self._sessions[k]
                stored = self._sessions.get(key, (now, {}))[1]
            state = copy.deepcopy(stored)  # a block that fails leaves the stored state as it was
            yield state
            with self._cond:
                self._sessions[key] = (time.monotonic(), copy.deepcopy(state))
