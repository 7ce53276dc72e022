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

import datetime as dt
from dataclasses import dataclass
from typing import Any, NamedTuple

from pydantic.alias_generators import to_camel

from . import checks, gates, validate
from .errors import (
    BlockerUnreadable,
    ClaimConflict,
    CorruptTask,
    DependencyCycle,
    GateRefused,
    InvalidInput,
    NextClaimMisused,
    ParentRefused,
    SelfDependency,
    TakenOver,
    TaskBlocked,
    TaskNotFound,
    UnfinishedParts,
)
from .models import (
    MAX_METADATA_BYTES,
    MAX_NOTE,
    MAX_NOTES,
    SETTABLE,
    TRACKED,
    UPDATE_STATUSES,
    WIRE,
    NewTask,
    Task,
    TaskPatch,
    TaskStatus,
    label_problem,
    metadata_size,
)
from .names import parse_task_id
from .taskgraph import graph, ranking

MAX_LEASE_SECONDS = 86_400  # a day: a longer claim is better held without a lease
# The longest a claim of the next task waits for one to become ready (waitSeconds): under
# the minute that clients commonly allow a tool call before they give up on it.
MAX_WAIT_SECONDS = 50
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
    """The patch with every value checked (each field by its rule), and its ids parsed,
    before any file is read."""
    if p.status is not None and p.status not in UPDATE_STATUSES:
        raise InvalidInput(f"status {p.status!r} is not one of {', '.join(UPDATE_STATUSES)}.")
    values = {name: _check(name, value) for name, value in p.values.items()}
    note = None if p.note is None else checks.text(p.note, "note", MAX_NOTE, required=True)
    fields = TaskPatch(status=p.status, lease_seconds=_lease_seconds(p.lease_seconds, p.get("owner")), note=note)
    fields.values = values  # as checked: None now means "remove it" (a priority or parent cleared)
    edges = Edges(
        add_blocked_by=validate.edges(p.add_blocked_by, "addBlockedBy"),
        add_blocks=validate.edges(p.add_blocks, "addBlocks"),
        remove_blocked_by=validate.edges(p.remove_blocked_by, "removeBlockedBy"),
        remove_blocks=validate.edges(p.remove_blocks, "removeBlocks"),
    )
    return fields, edges


def created_values(new: NewTask) -> dict[str, Any]:
    """TaskCreate's value of every SETTABLE field, checked (one not sent as its check makes
    of None: a text empty, metadata {}), merged into nothing where its rule merges."""
    values = {}
    for name, rule in SETTABLE.items():
        value = _check(name, new.values.get(name))
        if rule.merge is not None:
            value = rule.merge(Task.model_fields[name].get_default(call_default_factory=True), value)
        values[name] = value
    return values


def _check(name: str, value: Any) -> Any:
    check = SETTABLE[name].check
    assert check is not None  # SETTABLE holds the fields with a check
    return check(value, WIRE[name])


# What a claim of the next task may carry besides its taskId (and `label`); every other
# field of a patch (whatever fields TaskPatch grows) is refused with it. Its `parent` names
# the task whose parts it may take (next_pick), not a parent to set.
NEXT_CLAIM_FIELDS = ("status", "owner", "lease_seconds", "parent")
EDGE_CHANGES = ("add_blocked_by", "add_blocks", "remove_blocked_by", "remove_blocks")  # TaskPatch's


def is_next_claim(task_id: object, p: TaskPatch) -> bool:
    """Is this TaskUpdate a claim of the next task (taskId "next")? Refused, before anything
    is read, without status in_progress, without an owner, or with any other change."""
    if not (isinstance(task_id, str) and task_id.strip().lower() == ranking.NEXT_TASK):
        return False
    if p.status != TaskStatus.IN_PROGRESS.value:
        raise NextClaimMisused(f"status is {p.status!r}" if p.status else "status is missing")
    if not p.get("owner"):
        raise NextClaimMisused("owner is missing")
    others = [name for name in p.values if name not in NEXT_CLAIM_FIELDS]
    others += [name for name in (*EDGE_CHANGES, "note") if getattr(p, name) is not None]
    if others:
        raise NextClaimMisused("it also asks to change " + ", ".join(sorted(to_camel(name) for name in others)))
    return True


class Target(NamedTuple):
    """The task a TaskUpdate names: its id, or 0 for a claim of the next task (the best
    ready one, chosen under the plan's lock)."""

    task_id: int
    next_claim: bool


def target(task_id: object, p: TaskPatch) -> Target:
    """The task `task_id` names, the next-claim rule (is_next_claim) decided: once a call,
    by its first layer (Actions.task_update, else Planner.update_task)."""
    next_claim = is_next_claim(task_id, p)
    return Target(0 if next_claim else parse_task_id(task_id), next_claim)


def next_pick(next_claim: bool, raw: TaskPatch, p: TaskPatch) -> ranking.Pick:
    """Which tasks a claim of the next task may take: its `label` (checked as a label) and
    its checked `parent`, taken out of the changes it makes. `label` belongs to that claim."""
    if raw.label is None and not next_claim:
        return ranking.ANY
    if not next_claim:
        raise InvalidInput(
            f'label chooses the task a claim of taskId "{ranking.NEXT_TASK}" takes; to set a task\'s '
            "labels, send labels. Nothing was changed."
        )
    if raw.label is not None:
        reason = label_problem(raw.label, "label")
        if reason:
            raise InvalidInput(reason + " Nothing was changed.")
    return ranking.Pick(raw.label, p.values.pop("parent", None))


def wait_seconds(value: object, task_id: object) -> int:
    """A claim's waitSeconds, checked (0: not sent): 1 to MAX_WAIT_SECONDS, with taskId "next"."""
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_WAIT_SECONDS:
        raise InvalidInput(f"waitSeconds must be a whole number from 1 to {MAX_WAIT_SECONDS}. Nothing was changed.")
    if not (isinstance(task_id, str) and task_id.strip().lower() == ranking.NEXT_TASK):
        raise InvalidInput(
            f'waitSeconds belongs to a claim of taskId "{ranking.NEXT_TASK}": it waits for a task to become '
            "ready. Nothing was changed."
        )
    return value


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
    missing = _unknown_ids(txn, task, edges, gone)
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


def _unknown_ids(txn: Any, task: Task, edges: Edges, gone: set[int]) -> list[int]:
    """The ids named that neither exist nor (to be removed) are linked to `task`."""
    missing = [i for i in edges.add_blocked_by + edges.add_blocks if not txn.exists(i)]
    missing += [b for b in edges.remove_blocked_by if b in gone and b not in task.blocked_by]
    missing += [c for c in edges.remove_blocks if c in gone and c not in task.blocks]
    return missing


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
    """Set each checked field sent (merged, where its rule says how), but those the claim
    rules set (apply_status)."""
    for name, value in p.values.items():
        rule = SETTABLE[name]
        if rule.by_claim:
            continue
        setattr(task, name, rule.merge(getattr(task, name), value) if rule.merge else value)
        extra = task.__pydantic_extra__
        if extra and WIRE[name] in extra:  # another tool's value under this key (taskdoc): the field wins
            object.__setattr__(task, "__pydantic_extra__", {k: v for k, v in extra.items() if k != WIRE[name]})


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
    if p.get("owner") is not None:
        task.owner = p.get("owner")
    _apply_lease(task, p, now)
    return started, completed


def check_gate(plan: str, before: Task, task: Task, p: TaskPatch, now: dt.datetime) -> None:
    """An agent never starts a gated task, completes one whose gate still holds, or lifts a
    person's gate (gates.py): a person approves it (Planner.approve)."""
    if before.gate == gates.HUMAN and task.gate != gates.HUMAN:
        raise GateRefused(task.id, "remove the person's gate of", gates.who_completes(plan, before))
    if p.status is None or p.status == task.status.value:
        return
    if p.status == TaskStatus.IN_PROGRESS.value and gates.is_gated(task):
        raise GateRefused(task.id, "start", gates.who_completes(plan, task))
    if p.status == TaskStatus.COMPLETED.value and gates.holds(task, now):
        raise GateRefused(task.id, "complete", gates.who_completes(plan, task))


def _claim(plan: str, task: Task, p: TaskPatch, get: graph.Lookup, now: dt.datetime) -> None:
    """Another owner for a task in progress under `task.owner`. Without a lease only a
    claim (status=in_progress) is refused, as always; a new owner alone is a reassignment.
    Under a lease, any change of owner that keeps the task in progress is refused while the
    lease runs (a stale owner's renewal must not take it back), and is a hand-over once it
    has run out."""
    owner = p.get("owner")
    if task.status is not TaskStatus.IN_PROGRESS or not owner or not task.owner or owner == task.owner:
        return
    if task.lease_seconds and p.status in (None, TaskStatus.IN_PROGRESS.value):
        if not graph.lease_expired(task, now):
            raise ClaimConflict(task.id, task.owner)
        _check_blockers(plan, task, get)  # taking it over is starting it: the same rule
        _record_handover(task, owner, now)
    elif p.status == TaskStatus.IN_PROGRESS.value:
        raise ClaimConflict(task.id, task.owner)


def only_a_note(p: TaskPatch, edges: Edges) -> bool:
    """Does the (checked) patch only append a note? Anyone may leave one."""
    return p.note is not None and p.status is None and not p.values and p.lease_seconds is None and not edges.fields()


def apply_note(task: Task, note: str | None, by: str, now: dt.datetime) -> None:
    """Append the note, by `by`, now; refused on a task that holds MAX_NOTES already."""
    if note is None:
        return
    if len(task.notes) >= MAX_NOTES:
        raise InvalidInput(
            f"Task #{task.id} holds {MAX_NOTES} notes, the most a task keeps; none is ever dropped. "
            "Put what is left to say in its description, or in a new task. Nothing was changed."
        )
    task.notes = [*task.notes, {"by": by, "at": graph.stamp(now), "text": note}]


def check_not_taken_over(task: Task, caller: str | None, p: TaskPatch, edges: Edges, now: dt.datetime) -> None:
    """A former owner, whose claim another owner took over after its lease ran out, changes
    nothing of the task while it is in progress under another owner: not its status, fields
    or links, whether it names itself or is known by its session's claim (`caller`). Its
    late renewal, completion or release would undo the new owner's work. Taking the task
    back is a claim like any other: allowed once the new owner's lease has run out too. A
    note alone is welcome from anyone (only_a_note)."""
    caller = p.get("owner") or caller
    held_by_another = task.status is TaskStatus.IN_PROGRESS and bool(task.owner) and caller != task.owner
    if only_a_note(p, edges) or not caller or not held_by_another:
        return
    if p.get("owner") == caller and p.status in (None, TaskStatus.IN_PROGRESS.value) and graph.lease_expired(task, now):
        return  # a take-over in its turn (_claim)
    lost = _lost_at(task, caller)
    if lost is not None:
        raise TakenOver(task.id, caller, task.owner, lost)


def _lost_at(task: Task, former: str) -> str | None:
    """When the task was last taken over from `former` (its claim history), or None."""
    past = task.metadata.get(CLAIM_HISTORY)
    lost = [e for e in (past if isinstance(past, list) else []) if isinstance(e, dict) and e.get("owner") == former]
    if not lost:
        return None
    taken_at = lost[-1].get("takenAt")
    return taken_at if isinstance(taken_at, str) else ""


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
    if task.lease_seconds > 0 and p.get("owner") == task.owner:
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


def check_parent(plan: str, task_id: int, parent: int | None, exists: Any, get: graph.Lookup) -> None:
    """A parent names another task of the plan, and is none of the task's own parts: the
    walk up from it (each task's parent) must not reach the task. An unreadable ancestor
    ends the walk (its parent is not known)."""
    if parent is None:
        return
    if parent == task_id:
        raise ParentRefused(task_id, parent)
    if not exists(parent):
        raise TaskNotFound(plan, [parent])
    chain, at = [parent], parent
    while True:
        try:
            above = get(at).parent
        except CorruptTask:
            return
        if above is None or above in chain:
            return  # the top, or a loop above that this task is no part of (a hand edit)
        chain.append(above)
        if above == task_id:
            raise ParentRefused(task_id, parent, chain)
        at = above


def check_parts(task: Task, tasks: Any, deleting: bool = False) -> None:
    """A parent is completed only when all its parts are, and deleted only when it has none."""
    parts = [t.id for t in tasks if t.parent == task.id and (deleting or t.status is not TaskStatus.COMPLETED)]
    if parts:
        raise UnfinishedParts(task.id, parts, deleting)


def _blocker_to_unlink(b: int, gone: set[int], get: graph.Lookup) -> Task:
    """A stand-in for a blocker with no file or an unreadable one: blockedBy holds the link."""
    if b in gone:
        return Task(id=b, subject="gone")
    try:
        return get(b)
    except CorruptTask:
        return Task(id=b, subject="unreadable")


def changed_fields(before: Task, after: Task) -> list[str]:
    return [WIRE[f] for f in TRACKED if getattr(before, f) != getattr(after, f)]
