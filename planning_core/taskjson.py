"""A task's stored document read as it is, before the models validate it: its file name, its
JSON, its statuses, and the reason a document that is not JSON is unreadable. Every store's
reading starts here (taskdoc.parse_task validates what this gives), and so does the Claude
Code hook's, which answers at every prompt from the few fields it shows without loading the
models (a lazily validated read: plain_task, else the models decide). No pydantic here."""

from __future__ import annotations

import json
from collections.abc import Iterable
from enum import StrEnum
from typing import Any, Generic, NamedTuple, Protocol, TypeVar


class TaskStatus(StrEnum):
    """A task's status on disk; its values are models.StatusName's (tests/core/test_one_rule.py)."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


_STATUSES = {s.value: s for s in TaskStatus}


class BadDocument(ValueError):
    """A task document that is not JSON; the message is the reason, as a damaged file's."""


def task_filename(task_id: int) -> str:
    return f"task_{task_id}.json"


def invalid_reason(e: BaseException) -> str:
    """Why a document is not a task, from what refused it (the JSON parser, the models)."""
    return f"invalid task JSON ({(str(e).splitlines() or [type(e).__name__])[0][:120]})"


def load_document(raw: bytes | str) -> Any:
    """The JSON value of a task document, or BadDocument saying why there is none."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise BadDocument(invalid_reason(e)) from None


class PlainTask(NamedTuple):
    """What a plan's line shows of one task, read without the models."""

    id: int
    status: TaskStatus
    subject: str


def plain_task(document: Any, task_id: int) -> PlainTask | None:
    """The task's id, status and subject when the document holds them in the form a store
    writes (an object whose `id` is `task_id`, a known `status`, a text `subject`); None for
    any other document: only the models (taskdoc.parse_task) may judge it."""
    if not isinstance(document, dict):
        return None
    status = _STATUSES.get(document.get("status"))  # type: ignore[arg-type]
    subject = document.get("subject")
    if type(document.get("id")) is not int or document["id"] != task_id or status is None:
        return None
    return PlainTask(task_id, status, subject) if isinstance(subject, str) else None


class Counted(Protocol):
    @property
    def id(self) -> int: ...

    @property
    def status(self) -> TaskStatus: ...


T = TypeVar("T", bound=Counted)


class Tally(NamedTuple, Generic[T]):
    """A plan's readable tasks counted: all, completed, in progress, and its current task
    (the lowest-numbered in progress)."""

    total: int
    completed: int
    in_progress: int
    current: T | None


def tally(tasks: Iterable[T]) -> Tally[T]:
    """The one count behind every plan summary (models.summarize, the hook's plain read)."""
    total = completed = in_progress = 0
    current: T | None = None
    for t in tasks:
        total += 1
        if t.status is TaskStatus.COMPLETED:
            completed += 1
        elif t.status is TaskStatus.IN_PROGRESS:
            in_progress += 1
            if current is None or t.id < current.id:
                current = t
    return Tally(total, completed, in_progress, current)
