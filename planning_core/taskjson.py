"""A task's stored document read as it is, before the models validate it: its file name, its
JSON, its statuses, and the reason a document that is not JSON is unreadable. Every store's
reading starts here (taskdoc.parse_task validates what this gives), and so does the Claude
Code hook's, which answers at every prompt from the few fields it shows without loading the
models (a lazily validated read: plain_task, else the models decide). No pydantic here."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Any, Generic, NamedTuple, Protocol, TypeGuard, TypeVar


class TaskStatus(StrEnum):
    """A task's status on disk; its values are models.StatusName's (tests/core/test_one_rule.py)."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


_STATUSES = {s.value: s for s in TaskStatus}

MAX_PRIORITY = 4  # priorities run 0 (the most urgent) to 4, as beads counts them
# The bounds of a priority, once: the task's, its check's, PlanCreate's and the tools' (TaskUpdate's
# lower bound is models.CLEAR_PRIORITY, its rule's clear value).
PRIORITY_BOUNDS = (0, MAX_PRIORITY)


def is_priority(value: Any) -> TypeGuard[int]:
    return type(value) is int and PRIORITY_BOUNDS[0] <= value <= PRIORITY_BOUNDS[1]


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


def _text(value: Any) -> bool:
    return type(value) is str


def _ids(value: Any) -> bool:
    return type(value) is list and all(type(i) is int for i in value)


def _texts(value: Any) -> bool:
    return type(value) is list and all(type(i) is str for i in value)


def _notes(value: Any) -> bool:
    return type(value) is list and all(type(n) is dict and all(map(_text, n.values())) for n in value)


def _absent(value: Any) -> bool:
    return value is None


# The fields of a task document (models.Task's, by their keys on disk) in the forms the light
# read takes: a value of this form the models keep exactly as it is. A gate or a record of
# checks is left to the models (a passed time gate is completed by a write first), as is any
# other form; a key not listed is another tool's field, kept by the models as it is.
LIGHT_FORMS: dict[str, Callable[[Any], bool]] = {
    "id": lambda v: type(v) is int,
    "subject": _text,
    "description": _text,
    "status": lambda v: type(v) is str and v in _STATUSES,
    "blockedBy": _ids,
    "blocks": _ids,
    "owner": _text,
    "activeForm": _text,
    "metadata": lambda v: type(v) is dict,
    "createdAt": _text,
    "updatedAt": _text,
    "leaseSeconds": lambda v: type(v) is int,
    "leaseExpiresAt": _text,
    "priority": lambda v: v is None or is_priority(v),
    "labels": _texts,
    "parent": lambda v: v is None or (type(v) is int and v >= 1),
    "gate": _absent,
    "acceptance": _texts,
    "notes": _notes,
    "verification": _absent,
}
# The same fields by their names in the models, which read them too: left to the models.
MODEL_NAMES = frozenset("".join(f"_{c.lower()}" if c.isupper() else c for c in key) for key in LIGHT_FORMS)


def _takes(document: Any, task_id: int) -> bool:
    """Whether the light read takes the document: an object with `id` task_id, a `status` and
    a `subject`, every field in a form of LIGHT_FORMS."""
    if not isinstance(document, dict) or document.get("id") != task_id or not {"status", "subject"} <= document.keys():
        return False
    for key, value in document.items():
        form = LIGHT_FORMS.get(key)
        if (form is None and key in MODEL_NAMES) or (form is not None and not form(value)):
            return False
    return True


def plain_task(document: Any, task_id: int) -> PlainTask | None:
    """The task's id, status and subject when the light read takes the document (every field
    in a form the models keep as it is: a document the store reads as a task); None for any
    other document: only the models (taskdoc.parse_task) may judge it."""
    if not _takes(document, task_id):
        return None
    return PlainTask(task_id, _STATUSES[document["status"]], document["subject"])


class LightTask(NamedTuple):
    """What done.work_left and the ranking it asks read of one task, read without the models:
    each attribute as models.Task holds it."""

    id: int
    subject: str
    status: TaskStatus
    owner: str
    blocked_by: list[int]
    priority: int | None
    labels: list[str]
    parent: int | None
    lease_expires_at: str
    gate: None = None
    verification: None = None


def light_task(document: Any, task_id: int) -> LightTask | None:
    """The task as the models would hold it when every field of the document has a form in
    LIGHT_FORMS (and its `id` is `task_id`, with no link to itself, which a store's view drops);
    None for any other document: only the models may judge it."""
    if not _takes(document, task_id):
        return None
    blocked_by = document.get("blockedBy", [])
    if task_id in blocked_by:
        return None
    return LightTask(
        task_id,
        document["subject"],
        _STATUSES[document["status"]],
        document.get("owner", ""),
        blocked_by,
        document.get("priority"),
        document.get("labels", []),
        document.get("parent"),
        document.get("leaseExpiresAt", ""),
    )


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
