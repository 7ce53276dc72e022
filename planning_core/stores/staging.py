"""What every backend's PlanTransaction does the same way: the tasks put or deleted in the
transaction are kept apart from the committed plan until the store writes them at the end,
and every read inside the transaction sees them first."""

from __future__ import annotations

from ..errors import PlanningError, TaskIdsExhausted, TaskNotFound
from ..history import Event, change_events
from ..models import Task
from ..names import MAX_TASK_ID


class StagedTransaction:
    """Staged changes by id (None: deleted). A backend gives the committed side."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._staged: dict[int, Task | None] = {}

    def _committed(self, task_id: int) -> Task:
        """The committed task, as a copy the caller may change. Raises TaskNotFound or CorruptTask."""
        raise NotImplementedError

    def _committed_exists(self, task_id: int) -> bool:
        raise NotImplementedError

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

    def __init__(self, name: str, high: int) -> None:
        super().__init__(name)
        self._high = high
        self._issued = False  # an id was issued: the mark moves even if nothing else is written

    def next_id(self) -> int:
        if self._high + 1 > MAX_TASK_ID:
            raise TaskIdsExhausted(self.name, MAX_TASK_ID)  # the file store's limit, kept alike
        self._high += 1
        self._issued = True
        return self._high
