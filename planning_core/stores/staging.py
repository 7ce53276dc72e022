"""What every backend does the same way: a plan's snapshot is built by one function
(plan_snapshot), and in a PlanTransaction the tasks put or deleted are kept apart from
the committed plan until the store writes them at the end, every read inside the
transaction seeing them first (its snapshot too: the staged changes applied, then
`blocks` derived)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import PlanningError, TaskIdsExhausted, TaskNotFound
from ..history import Entry, Event, change_events
from ..models import CorruptFile, PlanSnapshot, Task
from ..names import MAX_TASK_ID
from ..taskgraph.graph import derive_blocks


def plan_snapshot(
    name: str, title: str, archived: bool, tasks: dict[int, Task], corrupt: Sequence[CorruptFile] = ()
) -> PlanSnapshot:
    """The snapshot of a plan whose tasks are `tasks` (id -> task, in id order; the
    caller's own dict, whose Task objects are never changed: a task to repair is replaced
    by a repaired copy). Every `blocks` is derived from the blockedBy lists, the source of
    truth; an edge to an unreadable task is kept as stored (graph.derive_blocks)."""
    derive_blocks(tasks, unreadable={c.task_id for c in corrupt})
    return PlanSnapshot.model_construct(name=name, title=title, archived=archived, tasks=tasks, corrupt=list(corrupt))


class CommittedPlan:
    """What a transaction's backend gives of the plan as committed, for its snapshot."""

    def __init__(self, title: str, tasks: dict[int, Task], corrupt: Sequence[CorruptFile] = ()) -> None:
        self.title = title
        self.tasks = tasks  # copies the transaction may change
        self.corrupt = corrupt


class StagedTransaction:
    """Staged changes by id (None: deleted). A backend gives the committed side."""

    def __init__(self, name: str, by: str) -> None:
        self.name = name
        self.by = by  # the writer the history entry names
        self._staged: dict[int, Task | None] = {}

    def _committed(self, task_id: int) -> Task:
        """The committed task, as a copy the caller may change. Raises TaskNotFound or CorruptTask."""
        raise NotImplementedError

    def _committed_exists(self, task_id: int) -> bool:
        raise NotImplementedError

    def _committed_plan(self) -> CommittedPlan:
        """The committed plan: its title, copies of its tasks, its unreadable tasks."""
        raise NotImplementedError

    def _shared_view(self) -> PlanSnapshot | None:
        """The view of the committed plan the backend's store shares (read-only), built from
        what the transaction holds of it; None: the backend shares none."""
        return None

    def snapshot(self) -> PlanSnapshot:
        """The plan as the transaction sees it: the staged changes applied (an unreadable
        task written afresh is no longer unreadable), then `blocks` derived. A transaction
        is always on an active plan."""
        committed = self._committed_plan()
        tasks = self._overlay(committed.tasks)
        corrupt = [c for c in committed.corrupt if c.task_id not in self._staged]
        return plan_snapshot(self.name, committed.title, False, tasks, corrupt)

    def get(self, task_id: int) -> Task:
        if task_id in self._staged:
            staged = self._staged[task_id]
            if staged is None:
                raise TaskNotFound(self.name, [task_id])
            return staged.clone()
        return self._committed(task_id)

    def exists(self, task_id: int) -> bool:
        if task_id in self._staged:
            return self._staged[task_id] is not None
        return self._committed_exists(task_id)

    def put(self, task: Task) -> None:
        self._staged[task.id] = task.clone()

    def delete(self, task_id: int) -> None:
        self._staged[task_id] = None

    def view(self) -> PlanSnapshot:
        """PlanTransaction.view: while nothing is staged, the store's shared view of the
        committed plan when its backend gave one (read-only, nothing copied); otherwise a
        snapshot."""
        shared = None if self._staged else self._shared_view()
        return self.snapshot() if shared is None else shared

    def read_tasks(self) -> Iterable[Task]:
        """PlanTransaction.read_tasks: the staged changes over the shared view when the
        backend gave one (a dict of references, no task copied); otherwise a snapshot."""
        shared = self._shared_view()
        if shared is None:
            return self.snapshot().tasks.values()
        tasks = dict(shared.tasks)
        for task_id, task in self._staged.items():
            if task is None:
                tasks.pop(task_id, None)
            else:
                tasks[task_id] = task
        return tasks.values()

    def staged_events(self) -> list[Event]:
        """What the staged changes do to the committed plan, as history events (read
        before the store writes them)."""
        before: dict[int, Task | None] = {}
        for task_id in self._staged:
            try:
                before[task_id] = self._committed(task_id) if self._committed_exists(task_id) else None
            except PlanningError:  # an unreadable task replaced: nothing known of before
                before[task_id] = None
        return change_events(before, self._staged)

    def staged_entry(self) -> Entry | None:
        """The history entry of the staged changes, None when they change nothing an
        agent would call a change."""
        events = self.staged_events()
        return Entry.now(events, self.by) if events else None

    def _overlay(self, tasks: dict[int, Task]) -> dict[int, Task]:
        """`tasks` (the caller's own copies of the committed ones) with the staged changes
        applied, sorted by id."""
        for task_id, task in self._staged.items():
            if task is None:
                tasks.pop(task_id, None)
            else:
                tasks[task_id] = task.clone()
        return dict(sorted(tasks.items()))


class MarkedTransaction(StagedTransaction):
    """A transaction whose store keeps the plan's high-water mark with the plan (memory,
    PostgreSQL): new ids count on from `high`, the highest id ever issued or present."""

    def __init__(self, name: str, high: int, by: str) -> None:
        super().__init__(name, by)
        self._high = high
        self._issued = False  # an id was issued: the mark moves even if nothing else is written

    def next_id(self) -> int:
        if self._high + 1 > MAX_TASK_ID:
            raise TaskIdsExhausted(self.name, MAX_TASK_ID)  # the file store's limit, kept alike
        self._high += 1
        self._issued = True
        return self._high
