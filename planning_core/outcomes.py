"""What each tool action returns as data (the tools' outputSchema). camelCase
field names, like the tools' parameters."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from .models import CorruptFile, PlanSummary, Task, TodoItem


class _Out(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, serialize_by_alias=True)


def _empty(value: object) -> bool:
    return not value


class TaskRow(_Out):
    """One line of the board. An empty owner or blocker list is left out: a TaskList
    answer carries up to 1,000 of these."""

    id: int
    subject: str
    status: str
    owner: str = Field(default="", exclude_if=_empty)
    blocked_by: list[int] = Field(default_factory=list, description="open blockers", exclude_if=_empty)
    claimable: bool = Field(default=False, description="in progress, its lease ran out", exclude_if=_empty)
    priority: int | None = Field(default=None, exclude_if=lambda v: v is None)
    labels: list[str] = Field(default_factory=list, exclude_if=_empty)
    parent: int | None = Field(default=None, exclude_if=lambda v: v is None)
    gate: str | dict[str, str] | None = Field(default=None, exclude_if=lambda v: v is None)


class PlanCreated(_Out):
    plan: PlanSummary
    task_ids: list[int]


class PlanListed(_Out):
    plans: list[PlanSummary]


class PlanArchivedResult(_Out):
    plan: PlanSummary
    location: str


class TaskCreated(_Out):
    plan: str
    task: TaskRow


class TaskUpdated(_Out):
    plan: str
    task_id: int
    changed: list[str]
    deleted: bool = False
    status: str | None = None
    unblocked: list[int] = Field(default_factory=list)
    all_done: bool = False
    todo_reset: bool = False


class TaskListed(_Out):
    plan: PlanSummary
    tasks: list[TaskRow]
    unreadable: list[CorruptFile] = Field(default_factory=list)
    next_cursor: str | None = None


class TaskFetched(_Out):
    plan: str
    task: Task
    open_blockers: list[int]


class TodoListed(_Out):
    topic: str = ""
    items: list[TodoItem]
    done: int
    total: int
