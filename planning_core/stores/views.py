"""A plan's view (PlanStore.view) brought up to date from the tasks that changed, not
rebuilt: after one write to a plan of 10,000 tasks, the next read used to derive every
`blocks`, sort every task and count every status again (about 40 ms).

The store hands in its parsed tasks (a new dict per version of the plan, each Task a new
object when its file changed, never changed in place). The tasks that changed are found
by object identity; only they and the tasks whose `blocks` they touch are derived again,
and the summary's counts move by what changed. The result is exactly what a full
derivation gives (graph.derive_blocks, models.summarize); tests/core/test_views.py
checks that against random changes. Anything unusual (a set of unreadable files that
changed, a task id inserted below the highest one) is derived in full, as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Hashable, Mapping

from ..models import CorruptFile, PlanSnapshot, PlanSummary, Task, TaskStatus, summarize, summary_of
from ..taskgraph.graph import derive_blocks, derive_task

MAX_KEPT_VIEWS = 256  # plans whose last view is kept (a view shares its tasks with the store's cache)


class KeptViews:
    """The PlanView of each plan a store has read lately, the least recently used dropped
    past MAX_KEPT_VIEWS. A PlanView is moved in place: one thread at a time (`lock`, or a
    lock of the store's own that every mover holds)."""

    def __init__(self) -> None:
        self._views: OrderedDict[Hashable, PlanView] = OrderedDict()
        self.lock = threading.Lock()

    def of(self, plan: Hashable) -> PlanView:
        """The plan's view (a fresh one if none is kept), to be moved under that lock."""
        view = self._views.pop(plan, None) or PlanView()
        self._views[plan] = view  # the most recently used last
        while len(self._views) > MAX_KEPT_VIEWS:
            self._views.popitem(last=False)
        return view


class PlanView:
    """The last view of one plan and what it was made from."""

    def __init__(self) -> None:
        self._source: Mapping[int, Task] | None = None  # the store's tasks the last view was made from
        self._unreadable: frozenset[int] = frozenset()
        self._tasks: dict[int, Task] = {}  # the last view's tasks: id order, `blocks` derived
        self._blocked: dict[int, set[int]] = {}  # blocker id -> the tasks whose blockedBy names it
        self._done = 0
        self._running: set[int] = set()  # the tasks in progress

    def view(
        self, name: str, title: str, archived: bool, source: Mapping[int, Task], corrupt: list[CorruptFile]
    ) -> PlanSnapshot:
        """The view of `source` (id -> task, in id order; the store's own, never changed)."""
        unreadable = frozenset(c.task_id for c in corrupt)
        if source is not self._source:
            if not self._update(source, unreadable):
                self._rebuild(source, unreadable)
            self._source = source
        summary = summary_of(
            name, title, archived, len(self._tasks), self._done, self._current(), len(self._running), len(corrupt)
        )
        snap = PlanSnapshot.model_construct(
            name=name, title=title, archived=archived, tasks=self._tasks, corrupt=list(corrupt)
        )
        snap.keep_summary(summary)
        return snap

    def _current(self) -> Task | None:
        return self._tasks[min(self._running)] if self._running else None

    def _rebuild(self, source: Mapping[int, Task], unreadable: frozenset[int]) -> None:
        tasks = dict(sorted(source.items()))
        derive_blocks(tasks, unreadable)
        self._tasks, self._unreadable = tasks, unreadable
        self._blocked = {}
        for t in source.values():
            self._link(t)
        self._done = sum(t.status is TaskStatus.COMPLETED for t in tasks.values())
        self._running = {i for i, t in tasks.items() if t.status is TaskStatus.IN_PROGRESS}

    def _link(self, t: Task) -> None:
        for b in t.blocked_by:
            if b != t.id:
                self._blocked.setdefault(b, set()).add(t.id)

    def _unlink(self, t: Task) -> None:
        for b in t.blocked_by:
            found = self._blocked.get(b)
            if found is not None:
                found.discard(t.id)

    def _update(self, source: Mapping[int, Task], unreadable: frozenset[int]) -> bool:
        """Move the view to `source` by what changed; False where a full derivation is due."""
        old = self._source
        if old is None or unreadable != self._unreadable:
            return False
        diff = self._diff(old, source)
        if diff is None:
            return False
        changed, added, removed = diff
        tasks = dict(self._tasks)  # a new dict: whoever holds the last view keeps it as it was
        touched: set[int] = set()
        for i in removed:
            touched |= self._forget(old[i])
            del tasks[i]
        for i in changed:
            was = old.get(i)
            if was is not None:
                touched |= self._forget(was)
            touched |= self._learn(source[i])
        for i in added:
            tasks[i] = source[i]  # in id order: every new id is above the old ones
        for i in touched & source.keys():
            tasks[i] = derive_task(source[i], self._blocked.get(i, ()), unreadable)
        self._tasks = tasks
        return True

    def _diff(
        self, old: Mapping[int, Task], source: Mapping[int, Task]
    ) -> tuple[list[int], list[int], list[int]] | None:
        """The ids changed (added included), added and removed since `old`; None when an id
        was added below the highest (the view's id order would break)."""
        changed = [i for i, t in source.items() if old.get(i) is not t]
        added = sorted(i for i in changed if i not in old)
        removed = [i for i in old if i not in source] if len(old) + len(added) != len(source) else []
        top = next(reversed(self._tasks), 0) if self._tasks else 0
        if added and added[0] <= top:
            return None
        return changed, added, removed

    def _forget(self, was: Task) -> set[int]:
        """Take a task's old version out of the links and counts; the ids whose view it touched."""
        self._unlink(was)
        self._count(was, -1)
        return set(was.blocked_by)

    def _learn(self, now: Task) -> set[int]:
        """Put a task's new version into the links and counts; the ids whose view it touches."""
        self._link(now)
        self._count(now, +1)
        return {*now.blocked_by, now.id}

    def _count(self, t: Task, by: int) -> None:
        if t.status is TaskStatus.COMPLETED:
            self._done += by
        elif t.status is TaskStatus.IN_PROGRESS:
            if by > 0:
                self._running.add(t.id)
            else:
                self._running.discard(t.id)


def full_view(
    name: str, title: str, archived: bool, source: Mapping[int, Task], corrupt: Collection[CorruptFile]
) -> tuple[dict[int, Task], PlanSummary]:
    """What PlanView gives, derived in full (the reference the tests compare it with)."""
    tasks = dict(sorted(source.items()))
    derive_blocks(tasks, {c.task_id for c in corrupt})
    return tasks, summarize(name, title, archived, tasks.values(), len(corrupt))
