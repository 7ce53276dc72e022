"""TaskUpdate, by concern: the patch checked, then the task's dependencies, its fields,
and its status, owner and lease, each on the tasks one transaction has read (Work).

Leases: a claim (`status=in_progress`, `owner`) may carry `leaseSeconds`. While the lease
runs, another owner is refused (ClaimConflict) as with any claim; every update that names
the owner renews it for the same length; once it has run out the task is claimable
(graph.lease_expired: TaskList's `ready` includes it) and another owner may take it, which
is recorded in the task's metadata (CLAIM_HISTORY). Leaving in_progress, or dropping the
owner, ends the lease. Times are the server's UTC clock: servers sharing a store must
have clocks that agree to well within a lease. A claim without a lease is as it always
was: it holds until its owner (or anyone) changes it."""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass
from typing import Any

from pydantic.alias_generators import to_camel

from . import graph, ranking, validate
from .errors import (
    BlockerUnreadable,
    ClaimConflict,
    CorruptTask,
    DependencyCycle,
    InvalidInput,
    NextClaimMisused,
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

MAX_LEASE_SECONDS = 86_400  # a day: a longer claim is better held without a lease
CLAIM_HISTORY = "claimHistory"  # the metadata key of the hand-overs after a lease ran out
CLAIM_HISTORY_KEPT = 5  # the last few; older entries are dropped


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
        lease_seconds=_lease_seconds(p.lease_seconds, p.owner),
    )
    edges = Edges(
        add_blocked_by=validate.edges(p.add_blocked_by, "addBlockedBy"),
        add_blocks=validate.edges(p.add_blocks, "addBlocks"),
        remove_blocked_by=validate.edges(p.remove_blocked_by, "removeBlockedBy"),
        remove_blocks=validate.edges(p.remove_blocks, "removeBlocks"),
    )
    return fields, edges


# What a claim of the next task may carry besides its taskId; every other field of a patch
# (whatever fields TaskPatch grows) is refused with it.
NEXT_CLAIM_FIELDS = ("status", "owner", "lease_seconds")


def is_next_claim(task_id: object, p: TaskPatch) -> bool:
    """Is this TaskUpdate a claim of the next task (taskId "next")? Refused, before anything
    is read, without status in_progress, without an owner, or with any other change."""
    if not (isinstance(task_id, str) and task_id.strip().lower() == ranking.NEXT_TASK):
        return False
    if p.status != TaskStatus.IN_PROGRESS.value:
        raise NextClaimMisused(f"status is {p.status!r}" if p.status else "status is missing")
    if not p.owner:
        raise NextClaimMisused("owner is missing")
    others = [
        f.name for f in dataclasses.fields(p) if f.name not in NEXT_CLAIM_FIELDS and getattr(p, f.name) is not None
    ]
    if others:
        raise NextClaimMisused("it also asks to change " + ", ".join(to_camel(name) for name in others))
    return True


def _lease_seconds(value: object, owner: str | None) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_LEASE_SECONDS:
        raise InvalidInput(f"leaseSeconds must be a whole number from 1 to {MAX_LEASE_SECONDS:,}.")
    if not owner:
        raise InvalidInput(
            "leaseSeconds belongs to a claim: send it with owner (and status='in_progress'). Nothing was changed."
        )
    return value


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


def apply_status(plan: str, task: Task, p: TaskPatch, get: graph.Lookup, now: dt.datetime) -> tuple[bool, bool]:
    """The claim (another owner is refused while the task is in progress under a claim,
    or taken over once its lease ran out), the status change (a start needs every blocker
    done), the owner, then the lease. (started, completed)."""
    started = completed = False
    _claim(plan, task, p, get, now)
    if p.status is not None and p.status != task.status.value:
        new = TaskStatus(p.status)
        if new is TaskStatus.IN_PROGRESS:
            _check_blockers(plan, task, get)
        task.status = new
        started, completed = new is TaskStatus.IN_PROGRESS, new is TaskStatus.COMPLETED
    if p.owner is not None:
        task.owner = p.owner
    _apply_lease(task, p, now)
    return started, completed


def _claim(plan: str, task: Task, p: TaskPatch, get: graph.Lookup, now: dt.datetime) -> None:
    """Another owner for a task in progress under `task.owner`. Without a lease only a
    claim (status=in_progress) is refused, as always; a new owner alone is a reassignment.
    Under a lease, any change of owner that keeps the task in progress is refused while the
    lease runs (a stale owner's renewal must not take it back), and is a hand-over once it
    has run out."""
    if task.status is not TaskStatus.IN_PROGRESS or not p.owner or not task.owner or p.owner == task.owner:
        return
    if task.lease_seconds and p.status in (None, TaskStatus.IN_PROGRESS.value):
        if not graph.lease_expired(task, now):
            raise ClaimConflict(task.id, task.owner)
        _check_blockers(plan, task, get)  # taking it over is starting it: the same rule
        _record_handover(task, p.owner, now)
    elif p.status == TaskStatus.IN_PROGRESS.value:
        raise ClaimConflict(task.id, task.owner)


def _check_blockers(plan: str, task: Task, get: graph.Lookup) -> None:
    try:
        blockers = graph.open_blockers(task, get)
    except CorruptTask as e:
        raise BlockerUnreadable(plan, task.id, e) from None
    if blockers:
        raise TaskBlocked(task.id, blockers)


def _apply_lease(task: Task, p: TaskPatch, now: dt.datetime) -> None:
    """A task in progress under an owner keeps its lease; `leaseSeconds` sets its length,
    and an update naming the owner (a claim, a take-over, a heartbeat) starts it afresh.
    Any other task holds none."""
    if task.status is not TaskStatus.IN_PROGRESS or not task.owner:
        if p.lease_seconds is not None:
            raise InvalidInput(
                f"leaseSeconds belongs to a claim, and task #{task.id} would not be in progress "
                "under an owner. Nothing was changed."
            )
        task.lease_seconds, task.lease_expires_at = 0, ""
        return
    if p.lease_seconds is not None:
        task.lease_seconds = p.lease_seconds
    if task.lease_seconds > 0 and p.owner == task.owner:
        task.lease_expires_at = graph.lease_end(now, task.lease_seconds)


def _record_handover(task: Task, new_owner: str, now: dt.datetime) -> None:
    """Append {owner, expiredAt, takenAt, by} to metadata.claimHistory, keeping the last
    CLAIM_HISTORY_KEPT and dropping older entries while the metadata would exceed its
    bound. When not even this one fits beside the task's own metadata, it is not kept:
    the bound holds, and the take-over itself is never refused for its record."""
    entry = {"owner": task.owner, "expiredAt": task.lease_expires_at, "takenAt": graph.stamp(now), "by": new_owner}
    past = task.metadata.get(CLAIM_HISTORY)
    history = [*(past if isinstance(past, list) else []), entry][-CLAIM_HISTORY_KEPT:]
    rest = {k: v for k, v in task.metadata.items() if k != CLAIM_HISTORY}
    while history:
        metadata = {**rest, CLAIM_HISTORY: history}
        if metadata_size(metadata) <= MAX_METADATA_BYTES:
            task.metadata = metadata
            return
        history = history[1:]
    task.metadata = rest


TRACKED = (
    "subject",
    "description",
    "active_form",
    "status",
    "owner",
    "blocked_by",
    "blocks",
    "metadata",
    "lease_seconds",
    "lease_expires_at",
)
# Every field of a task a TaskUpdate may change, in the order its answer names them: all of
# Task's fields but its identity and timestamps (tests/core/test_one_rule.py checks that).
UNTRACKED = ("id", "created_at", "updated_at")
_FIELD_NAMES = {f: Task.model_fields[f].alias or f for f in TRACKED}


def _blocker_to_unlink(b: int, gone: set[int], get: graph.Lookup) -> Task:
    """A stand-in for a blocker with no file or an unreadable one: blockedBy holds the link."""
    if b in gone:
        return Task(id=b, subject="gone")
    try:
        return get(b)
    except CorruptTask:
        return Task(id=b, subject="unreadable")


def changed_fields(before: Task, after: Task) -> list[str]:
    return [_FIELD_NAMES.get(f, f) for f in TRACKED if getattr(before, f) != getattr(after, f)]
