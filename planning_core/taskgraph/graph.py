"""The dependency rules, on a lazily loaded graph, and when a task may be started.

Only the tasks a rule actually visits are read, so a write stays cheap however
large the plan grows. `blockedBy` is the source of truth; `blocks` mirrors it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from .. import times
from ..errors import CorruptTask, PlanningError, TaskNotFound
from ..taskjson import TaskStatus

if TYPE_CHECKING:  # the models' types only: a plan read plainly is judged without them
    from ..models import PlanSnapshot, Task

Lookup = Callable[[int], "Task"]
Clock = Callable[[], dt.datetime]
"""The time a rule compares leases with: the server's UTC clock (tests pass their own)."""


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def stamp(moment: dt.datetime) -> str:
    """A stored time, as createdAt: `2026-05-28T09:00:00Z` (whole seconds, UTC)."""
    return times.stamp(moment)


def lease_end(moment: dt.datetime, seconds: int) -> str:
    """When a lease of `seconds` taken at `moment` runs out, rounded up to the second:
    a lease lasts at least what was asked (a 1 s lease never ends at once)."""
    end = moment + dt.timedelta(seconds=seconds)
    if end.microsecond:
        end = end.replace(microsecond=0) + dt.timedelta(seconds=1)
    return stamp(end)


def _parse_time(text: str) -> dt.datetime | None:
    return times.parse_utc(text)


def lease_expired(task: Task, now: dt.datetime) -> bool:
    """A claim whose lease ran out: in progress, with an expiry that has passed. Another
    owner may take it. A claim without a lease never expires, and neither does one whose
    expiry cannot be read (a hand edit): a claim must not lapse by a guess."""
    until = lease_runs_out(task)
    return until is not None and now >= until


def lease_runs_out(task: Task) -> dt.datetime | None:
    """When an in-progress task's lease runs out; None for a claim that never lapses."""
    if task.status is not TaskStatus.IN_PROGRESS or not task.lease_expires_at:
        return None
    return _parse_time(task.lease_expires_at)


def can_start(task: Task, now: dt.datetime) -> bool:
    """Not yet started, or started under a lease that ran out (claimable); never a gated
    task, which no agent starts (gates.py)."""
    return task.gate is None and (task.status is TaskStatus.PENDING or lease_expired(task, now))


def path_via_blockers(start: int, goal: int, lookup: Lookup) -> list[int] | None:
    """A chain start -> blocker -> blocker ... -> goal following blockedBy, if one exists."""
    if start == goal:
        return [start]
    parent: dict[int, int] = {start: start}
    stack = [start]
    while stack:
        node = stack.pop()
        try:
            blockers = lookup(node).blocked_by
        except TaskNotFound:
            continue  # a dangling edge to a deleted task leads nowhere
        for nxt in blockers:
            if nxt in parent:
                continue
            parent[nxt] = node
            if nxt == goal:
                path = [goal]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return path[::-1]
            stack.append(nxt)
    return None


def cycle_if_linked(blocker: int, blocked: int, lookup: Lookup) -> list[int] | None:
    """The cycle that `blocker blocks blocked` would close, in `blocks` order, e.g. [4, 2, 4]."""
    chain = path_via_blockers(blocker, blocked, lookup)
    if chain is None:
        return None
    # chain: blocker is blocked by ... by `blocked`; read backwards it is a blocks-path.
    return [*chain[::-1], blocked]


def open_blockers(task: Task, lookup: Lookup, *, unreadable_open: bool = False) -> list[int]:
    """The blockers not completed. One whose file is gone no longer blocks. One that cannot
    be read raises (a rule must not guess it is done), or with `unreadable_open` counts as
    open (for display)."""
    open_ids = []
    for b in task.blocked_by:
        try:
            if lookup(b).status is not TaskStatus.COMPLETED:
                open_ids.append(b)
        except TaskNotFound:
            continue
        except CorruptTask:
            if not unreadable_open:
                raise
            open_ids.append(b)
    return open_ids


# For whole-plan queries: `statuses` maps every readable task to its status and every
# unreadable one to PENDING (unknown counts as open); an id absent from it is gone.
def blocker_open(blocker: int, statuses: Mapping[int, TaskStatus]) -> bool:
    return statuses.get(blocker, TaskStatus.COMPLETED) is not TaskStatus.COMPLETED


class PlanStatuses(Mapping[int, TaskStatus]):
    """Each task's status, an unreadable one's as pending (it may be open), looked up in the
    snapshot when asked: a page of a big plan asks about its own tasks' blockers only."""

    def __init__(self, snap: PlanSnapshot) -> None:
        self._tasks = snap.tasks
        self._unreadable = {c.task_id for c in snap.corrupt}

    def __getitem__(self, task_id: int) -> TaskStatus:
        status = self.get(task_id)
        if status is None:
            raise KeyError(task_id)
        return status

    def get(self, task_id: int, default: TaskStatus | None = None) -> TaskStatus | None:  # type: ignore[override]
        if task_id in self._unreadable:  # an unreadable file wins over a task of its id, as before
            return TaskStatus.PENDING
        task = self._tasks.get(task_id)
        return task.status if task is not None else default

    def __iter__(self) -> Iterator[int]:
        return iter({*self._tasks, *self._unreadable})

    def __len__(self) -> int:
        return len({*self._tasks, *self._unreadable})


def plan_statuses(snap: PlanSnapshot) -> Mapping[int, TaskStatus]:
    return PlanStatuses(snap)


def open_blockers_by_task(snap: PlanSnapshot) -> dict[int, list[int]]:
    """Per unfinished task of the plan, its blockers that are not completed."""
    statuses = plan_statuses(snap)
    return {
        t.id: [b for b in t.blocked_by if blocker_open(b, statuses)]
        for t in snap.tasks.values()
        if t.status is not TaskStatus.COMPLETED
    }


def ready_ids(snap: PlanSnapshot, now: dt.datetime | None = None) -> list[int]:
    statuses = plan_statuses(snap)
    at = now or utc_now()
    return [i for i, t in sorted(snap.tasks.items()) if is_ready(t, statuses, at)]


def is_ready(task: Task, statuses: Mapping[int, TaskStatus], now: dt.datetime | None = None) -> bool:
    """The one definition of ready, for every view: can be started (pending, or a claim
    whose lease ran out) and no blocker open."""
    return can_start(task, now or utc_now()) and not any(blocker_open(b, statuses) for b in task.blocked_by)


def is_blocked(task: Task, statuses: Mapping[int, TaskStatus]) -> bool:
    """The one definition of blocked, for every view: not completed, with a blocker that
    is not. A task in progress whose blocker was reopened is blocked too."""
    return task.status is not TaskStatus.COMPLETED and any(blocker_open(b, statuses) for b in task.blocked_by)


def blocked_ids(snap: PlanSnapshot) -> list[int]:
    statuses = plan_statuses(snap)
    return [i for i, t in sorted(snap.tasks.items()) if is_blocked(t, statuses)]


def newly_ready(task: Task, get: Lookup, now: dt.datetime | None = None) -> list[Task]:
    """The tasks `task` blocks that can start now. Only its neighbours are read; one that
    cannot be read is skipped (nobody can say it is ready), never a reason to refuse."""
    ready = []
    at = now or utc_now()
    for d in task.blocks:
        try:
            dep = get(d)
            # blockedBy is the truth: a stale `blocks` entry must not name a task as unblocked.
            if task.id in dep.blocked_by and can_start(dep, at) and not open_blockers(dep, get):
                ready.append(dep)
        except PlanningError:
            continue
    return ready


def link(blocker: Task, blocked: Task) -> None:
    if blocker.id not in blocked.blocked_by:
        blocked.blocked_by.append(blocker.id)
    if blocked.id not in blocker.blocks:
        blocker.blocks.append(blocked.id)


def unlink(blocker: Task, blocked: Task) -> None:
    blocked.blocked_by = [i for i in blocked.blocked_by if i != blocker.id]
    blocker.blocks = [i for i in blocker.blocks if i != blocked.id]


def positional_cycle(deps: dict[int, Iterable[int]]) -> list[int] | None:
    """A cycle among new tasks given as id -> blockedBy ids (for PlanCreate)."""
    state: dict[int, int] = {}  # 1 = on stack, 2 = done
    stack: list[int] = []

    def visit(node: int) -> list[int] | None:
        state[node] = 1
        stack.append(node)
        for nxt in deps.get(node, ()):
            if state.get(nxt) == 1:
                loop = stack[stack.index(nxt) :]
                # stack holds blockedBy order; print it as blocks order.
                return [*loop[::-1], loop[-1]]
            if state.get(nxt) is None and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for n in deps:
        if state.get(n) is None and (found := visit(n)):
            return found
    return None


def derive_blocks(tasks: dict[int, Task], unreadable: Collection[int] = ()) -> None:
    """Derive every `blocks` from the `blockedBy` lists (the source of truth).

    A task that needs repairing is replaced in `tasks` by a repaired copy; the Task
    objects passed in are never changed (they may be a cache's). An edge to an
    unreadable task cannot be checked against its `blockedBy`, so it is kept as stored
    rather than dropped (the file is reported, not guessed at)."""
    derived: dict[int, set[int]] = {}
    for t in tasks.values():
        for b in t.blocked_by:
            if b != t.id and b in tasks:
                derived.setdefault(b, set()).add(t.id)
    for i, t in tasks.items():
        mine = derived.get(i)
        if mine is None and not t.blocks and not t.blocked_by:
            continue  # most tasks of a big plan: nothing to derive, nothing to repair
        tasks[i] = derive_task(t, mine or (), unreadable)


def derive_task(t: Task, blocked: Collection[int], unreadable: Collection[int]) -> Task:
    """`t` with `blocks` derived: the readable tasks whose blockedBy names it (`blocked`),
    and any stored edge to an unreadable task. `t` itself if nothing needs repairing, else
    a repaired copy (a self-link in blockedBy dropped too)."""
    if not blocked and not t.blocks and not t.blocked_by:
        return t
    blocks = sorted(set(blocked) | {b for b in t.blocks if b in unreadable})
    if blocks == t.blocks and t.id not in t.blocked_by:
        return t
    repaired = t.clone()
    repaired.blocks = blocks
    repaired.blocked_by = [b for b in t.blocked_by if b != t.id]
    return repaired
