"""The storage interface the planner is written against.

A backend stores plans (a title and a plan.md text) and their tasks, and offers a
transaction per plan: everything read inside it is fresh, and everything staged
is written at once when it ends, with other writers of that plan shut out. The
file store is one backend; another (say PostgreSQL) implements these two
protocols and nothing above them changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Protocol

from .models import PlanSnapshot, PlanSummary, Task

PlanArchiveCheck = Callable[[PlanSnapshot], None]
"""Called under the plan's lock before archiving; raises to refuse."""


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
    def active_plans(self) -> list[str]:
        """Names of plans in progress, oldest first."""
        ...

    def archived_plans(self) -> list[str]: ...

    def is_archived(self, name: str) -> bool:
        """True if in done/, False if active; raises PlanNotFound otherwise."""
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
        """Move the plan to the archive under its lock after `check` passes."""
        ...

    def plan_versions(self) -> dict[str, object]:
        """Every plan (active and archived) with a cheap version value that changes
        whenever the plan may have changed, on this process or another: for watchers."""
        ...

    def watch_roots(self) -> list[str]:
        """Folders an OS file watcher can watch for every change to the plans (none:
        the backend has no such folders, and watchers poll plan_versions)."""
        ...

    def plans_of(self, paths: Iterable[str]) -> set[str]:
        """The plans that changed files among `paths` (as a watcher of watch_roots names
        them), with nothing that is not a plan's content (locks, temp files)."""
        ...
