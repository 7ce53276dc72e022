"""TaskUpdate, by concern: the patch checked, then the task's dependencies, its fields,
and its status and owner, each on the tasks one transaction has read (Work)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import graph, validate
from .errors import (
    BlockerUnreadable,
    ClaimConflict,
    CorruptTask,
    DependencyCycle,
    InvalidInput,
    SelfDependency,
    TaskBlocked,
    TaskNotFound,
)
from .models import (
    MAX_DESCRIPTION,
    MAX_METADATA_BYTES,
    MAX_SHORT_TEXT,
    MAX_SUBJECT,
    UPDATE_STATUSES,
    Task,
    TaskPatch,
    TaskStatus,
    metadata_size,
)


@dataclass(frozen=True)
class Edges:
    """The patch's dependency changes, as checked task ids."""

    add_blocked_by: list[int]
    add_blocks: list[int]
    remove_blocked_by: list[int]
    remove_blocks: list[int]

    def fields(self) -> list[str]:
        """The task's fields these name (for an update that only repaired a neighbour)."""
        before = self.add_blocked_by + self.remove_blocked_by
        after = self.add_blocks + self.remove_blocks
        return [f for f, ids in (("blockedBy", before), ("blocks", after)) if ids]


class Work:
    """The tasks one update reads, each with its state before the update, so only the
    ones that changed are written."""

    def __init__(self, txn: Any) -> None:
        self.txn = txn
        self.tasks: dict[int, Task] = {}
        self.original: dict[int, Task] = {}

    def get(self, i: int) -> Task:
        if i not in self.tasks:
            self.tasks[i] = self.txn.get(i)
            self.original[i] = self.tasks[i].clone()
        return self.tasks[i]

    def neighbours_changed(self, tid: int) -> bool:
        return any(t != self.original[i] for i, t in self.tasks.items() if i != tid)

    def write(self, now: str) -> None:
        for i, t in self.tasks.items():
            if t != self.original[i]:
                t.updated_at = now
                self.txn.put(t)


def checked(p: TaskPatch) -> tuple[TaskPatch, Edges]:
    """The patch with every value checked, and its ids parsed, before any file is read."""
    if p.status is not None and p.status not in UPDATE_STATUSES:
        raise InvalidInput(f"status {p.status!r} is not one of {', '.join(UPDATE_STATUSES)}.")

    def text(value: str | None, field: str, limit: int, required: bool = False) -> str | None:
        return None if value is None else validate.text(value, field, limit, required=required)

    fields = TaskPatch(
        status=p.status,
        subject=text(p.subject, "subject", MAX_SUBJECT, required=True),
        description=text(p.description, "description", MAX_DESCRIPTION),
        active_form=text(p.active_form, "activeForm", MAX_SHORT_TEXT),
        owner=text(p.owner, "owner", MAX_SHORT_TEXT),
        metadata=validate.metadata(p.metadata) if p.metadata is not None else None,
    )
    edges = Edges(
        add_blocked_by=validate.edges(p.add_blocked_by, "addBlockedBy"),
        add_blocks=validate.edges(p.add_blocks, "addBlocks"),
        remove_blocked_by=validate.edges(p.remove_blocked_by, "removeBlockedBy"),
        remove_blocks=validate.edges(p.remove_blocks, "removeBlocks"),
    )
    return fields, edges


def apply_edges(txn: Any, plan: str, task: Task, edges: Edges, get: graph.Lookup) -> None:
    """Remove, then add, the links named, refusing an unknown id. A link to a task with no
    file (a hand delete, an older version's crash) can still be removed: there is no
    neighbour to update. An unknown id not linked is refused."""
    gone = {i for i in edges.remove_blocked_by + edges.remove_blocks if not txn.exists(i)}
    missing = [i for i in edges.add_blocked_by + edges.add_blocks if not txn.exists(i)]
    missing += [b for b in edges.remove_blocked_by if b in gone and b not in task.blocked_by]
    missing += [c for c in edges.remove_blocks if c in gone and c not in task.blocks]
    if missing:
        raise TaskNotFound(plan, missing)
    for b in edges.remove_blocked_by:
        graph.unlink(_blocker_to_unlink(b, gone, get), task)
    for c in edges.remove_blocks:
        graph.unlink(task, Task(id=c, subject="gone") if c in gone else get(c))
    for b in edges.add_blocked_by:
        _link(get(b), task, get)
    for c in edges.add_blocks:
        _link(task, get(c), get)


def _link(blocker: Task, blocked: Task, get: graph.Lookup) -> None:
    if blocker.id == blocked.id:
        raise SelfDependency(blocker.id)
    if blocker.id in blocked.blocked_by:
        return
    cycle = graph.cycle_if_linked(blocker.id, blocked.id, get)
    if cycle:
        raise DependencyCycle(cycle)
    graph.link(blocker, blocked)


def apply_fields(task: Task, p: TaskPatch) -> None:
    if p.subject is not None:
        task.subject = p.subject
    if p.description is not None:
        task.description = p.description
    if p.active_form is not None:
        task.active_form = p.active_form
    if p.metadata is not None:
        merged = {**task.metadata, **p.metadata}
        task.metadata = {k: v for k, v in merged.items() if v is not None}
        if metadata_size(task.metadata) > MAX_METADATA_BYTES:
            raise InvalidInput(f"metadata would exceed {MAX_METADATA_BYTES // 1024} KB; store less.")


def apply_status(plan: str, task: Task, p: TaskPatch, get: graph.Lookup) -> tuple[bool, bool]:
    """The status change (a start needs every blocker done), then the owner: claiming a
    task already in progress under someone else is refused. (started, completed)."""
    started = completed = False
    if p.status is not None and p.status != task.status.value:
        new = TaskStatus(p.status)
        if new is TaskStatus.IN_PROGRESS:
            try:
                blockers = graph.open_blockers(task, get)
            except CorruptTask as e:
                raise BlockerUnreadable(plan, task.id, e) from None
            if blockers:
                raise TaskBlocked(task.id, blockers)
        task.status = new
        started, completed = new is TaskStatus.IN_PROGRESS, new is TaskStatus.COMPLETED
    elif p.status == TaskStatus.IN_PROGRESS.value and p.owner and task.owner and p.owner != task.owner:
        raise ClaimConflict(task.id, task.owner)
    if p.owner is not None:
        task.owner = p.owner
    return started, completed


_TRACKED = ("subject", "description", "active_form", "status", "owner", "blocked_by", "blocks", "metadata")
_FIELD_NAMES = {"active_form": "activeForm", "blocked_by": "blockedBy"}


def _blocker_to_unlink(b: int, gone: set[int], get: graph.Lookup) -> Task:
    """A stand-in for a blocker with no file or an unreadable one: blockedBy holds the link."""
    if b in gone:
        return Task(id=b, subject="gone")
    try:
        return get(b)
    except CorruptTask:
        return Task(id=b, subject="unreadable")


def changed_fields(before: Task, after: Task) -> list[str]:
    return [_FIELD_NAMES.get(f, f) for f in _TRACKED if getattr(before, f) != getattr(after, f)]
