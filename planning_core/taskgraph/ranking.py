"""Which ready task comes first: the one rule for the claim of the next task (TaskUpdate
taskId "next") and for the order of TaskList status=ready.

Best first: the highest priority (0 the most urgent; a task without one ranks after 2),
then the most work waiting behind it (the longest chain of unfinished tasks it blocks,
directly or through others), then the lowest id. Ready is graph.is_ready's: pending (or a
claim whose lease ran out) with every blocker completed.

When nothing is ready, `nothing_ready` says why, for an agent that must decide whether to
wait (and until when) or stop: every task completed, or the work left waits for the tasks
in progress (their owners and when their leases run out), or for unreadable tasks, or for
a cycle of hand-edited links.
"""

from __future__ import annotations

import bisect
import datetime as dt
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from .. import gates
from ..taskjson import TaskStatus
from . import graph

if TYPE_CHECKING:  # the models' types only: a plan read plainly is ranked without them
    from ..models import PlanSnapshot, Task

NEXT_TASK = "next"  # TaskUpdate's taskId that claims the best ready task
PRIORITIES = range(5)  # 0 (most urgent) to 4
NO_PRIORITY_RANK = 2.5  # a task without a priority ranks after priority 2, before 3
READY_ORDER = "best first: priority, then the work waiting behind, then id"
MAX_NAMED = 10  # tasks a "nothing ready" answer names; the rest are counted
MAX_KEPT_PLANS = 64  # plans whose ranking is kept (one version each)
MAX_UPDATED = 64  # changed tasks up to which a plan's kept ranking is updated, not made anew


class Pick(NamedTuple):
    """Which ready tasks a claim of the next task may take (TaskUpdate `label`, `parent`),
    chosen as TaskList's `label` and `parent` filters choose: tasks carrying the label, the
    parts of the parent task. Nothing given: any."""

    label: str | None = None
    parent: int | None = None

    def matches(self, task: Task) -> bool:
        return (self.label is None or self.label in task.labels) and (self.parent is None or task.parent == self.parent)

    def narrows(self) -> bool:
        return self.label is not None or self.parent is not None

    def describe(self) -> str:
        """`labelled 'ui' and part of #7`."""
        parts = [f"labelled {self.label!r}"] if self.label is not None else []
        parts += [f"part of #{self.parent}"] if self.parent is not None else []
        return " and ".join(parts)


ANY = Pick()


class RankKey(NamedTuple):
    priority: float
    minus_chain: int  # negated: a longer chain sorts first
    task_id: int


def priority_rank(task: Task) -> float:
    """The task's priority as a rank; NO_PRIORITY_RANK when it has none (or not a valid one)."""
    # A document's "priority" that is not one (another tool's "high") stays an unknown field
    # (taskdoc.validated_task), never this one: the field alone says.
    value = task.priority
    if isinstance(value, int) and not isinstance(value, bool) and value in PRIORITIES:
        return float(value)
    return NO_PRIORITY_RANK


def chain_lengths(snap: PlanSnapshot) -> dict[int, int]:
    """Per task, the most unfinished tasks on one chain of tasks it blocks (0 for none):
    one pass over the graph from the tasks that block nothing back along blockedBy (the
    truth), so a chain thousands long costs no recursion. Tasks on a cycle of hand-edited
    links (and those before one) keep what was measured of them."""
    return _measured_chains(snap)[0]


def _measured_chains(snap: PlanSnapshot) -> tuple[dict[int, int], bool]:
    """chain_lengths, and whether every task was measured (no cycle)."""
    tasks = snap.tasks
    length = dict.fromkeys(tasks, 0)
    unmeasured = dict.fromkeys(tasks, 0)  # per task, the tasks it blocks not yet measured
    for t in tasks.values():
        for b in t.blocked_by:
            if b in unmeasured:
                unmeasured[b] += 1
    measured = [i for i, n in unmeasured.items() if n == 0]
    found = len(measured)
    done = TaskStatus.COMPLETED
    while measured:
        i = measured.pop()
        t = tasks[i]
        behind = length[i] + (t.status is not done)
        for b in t.blocked_by:
            left = unmeasured.get(b)
            if left is None:
                continue  # a blocker gone or unreadable: no chain to lengthen
            if behind > length[b]:
                length[b] = behind
            unmeasured[b] = left - 1
            if left == 1:
                measured.append(b)
                found += 1
    return length, found == len(tasks)


class Ranked(NamedTuple):
    """One version of a plan, ranked: the tasks that may be ready, best first, and the
    chain lengths their rank came from."""

    order: list[Task]
    chains: dict[int, int]


def _may_be_ready(task: Task, still_open: Callable[[int], bool]) -> bool:
    """Ready now or later without a write (graph.is_ready but for the moment, which
    graph.can_start judges when asked): pending, or in progress under a lease that may run
    out, with no blocker open (graph.blocker_open: unfinished or unreadable)."""
    return (
        (task.status is TaskStatus.PENDING or (task.status is TaskStatus.IN_PROGRESS and bool(task.lease_expires_at)))
        and not any(still_open(b) for b in task.blocked_by)
        and task.gate is None  # no agent starts a gated task (gates.py)
    )


def ranked(snap: PlanSnapshot) -> Ranked:
    """The tasks that may be ready (_may_be_ready), best first."""
    return _ranked_anew(snap)[0]


def _ranked_anew(snap: PlanSnapshot) -> tuple[Ranked, bool]:
    """ranked, and whether its chains measured every task (no cycle)."""
    tasks = snap.tasks
    chains, whole = _measured_chains(snap)
    still_open = {i for i, t in tasks.items() if t.status is not TaskStatus.COMPLETED}
    still_open.update(c.task_id for c in snap.corrupt)
    candidates = [t for t in tasks.values() if _may_be_ready(t, still_open.__contains__)]
    return Ranked(sorted(candidates, key=lambda t: rank_key(t, chains)), chains), whole


class _Kept(NamedTuple):
    """A plan's last ranked version, and what ranking a later version from it needs: per
    task, the tasks naming it in blockedBy (None: this version is ranked anew next time)."""

    snap: PlanSnapshot
    ranked: Ranked
    below: dict[int, list[int]] | None


def _kept_anew(snap: PlanSnapshot) -> _Kept:
    made, whole = _ranked_anew(snap)
    if not whole or snap.corrupt:
        return _Kept(snap, made, None)
    below: dict[int, list[int]] = {i: [] for i in snap.tasks}
    for t in snap.tasks.values():
        for b in t.blocked_by:
            if b in below:
                below[b].append(t.id)
    return _Kept(snap, made, below)


def _changed_tasks(was: PlanSnapshot, now: PlanSnapshot) -> list[int] | None:
    """The tasks of `now` that are not those of `was` (a view shares the task objects it did
    not reread); None when the change is not one a ranking is updated for: tasks added or
    removed, a link changed, an unreadable task, or more than MAX_UPDATED changed."""
    if now.corrupt or len(was.tasks) != len(now.tasks):
        return None
    before = was.tasks
    changed: list[int] = []
    for i, t in now.tasks.items():
        old = before.get(i)
        if old is t:
            continue
        if old is None or old.blocked_by != t.blocked_by or len(changed) == MAX_UPDATED:
            return None
        changed.append(i)
    return changed


def _rechain(
    chains: dict[int, int], tasks: Mapping[int, Task], below: dict[int, list[int]], toggled: list[int]
) -> set[int]:
    """Update `chains` for the tasks `toggled` (completed, or no longer): each blocker's chain
    is measured again from the tasks it blocks, and so on back while one changes. The
    tasks whose chain changed."""
    done = TaskStatus.COMPLETED
    moved: set[int] = set()
    todo = [b for i in toggled for b in tasks[i].blocked_by]
    while todo:
        b = todo.pop()
        if b not in tasks:
            continue
        length = max((chains[d] + (tasks[d].status is not done) for d in below[b]), default=0)
        if length != chains[b]:
            chains[b] = length
            moved.add(b)
            todo.extend(tasks[b].blocked_by)
    return moved


def _reranked(kept: _Kept, snap: PlanSnapshot) -> Ranked | None:
    """The ranking of `snap` from the kept one of an earlier version, when only a few tasks
    changed and no link (a claim, a completion, a lease): what ranked(snap) would give,
    without measuring the whole plan again. None: rank it anew."""
    changed = _changed_tasks(kept.snap, snap) if kept.below is not None else None
    if changed is None or kept.below is None:
        return None
    tasks, before, below = snap.tasks, kept.snap.tasks, kept.below
    done = TaskStatus.COMPLETED
    toggled = [i for i in changed if (tasks[i].status is done) != (before[i].status is done)]
    chains = dict(kept.ranked.chains)
    touched = set(changed) | _rechain(chains, tasks, below, toggled)
    touched.update(d for i in toggled for d in below[i])  # their blockers' state decides if they are ready

    def still_open(b: int) -> bool:
        blocker = tasks.get(b)
        return blocker is not None and blocker.status is not done

    order = [t for t in kept.ranked.order if t.id not in touched]
    for i in touched:
        if _may_be_ready(tasks[i], still_open):
            bisect.insort(order, tasks[i], key=lambda t: rank_key(t, chains))
    return Ranked(order, chains)


class _KeptRanks:
    """The ranking of each plan's last view (a store's view is one object per version of
    the plan, PlanStore.view): TaskList pages and claims that find the plan unchanged
    rank it once, not once per call; a later version with a few tasks changed (a claim, a
    completion) is ranked from it (_reranked), not measured whole again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, _Kept] = {}

    def of(self, snap: PlanSnapshot) -> Ranked:
        with self._lock:
            hit = self._kept.get(snap.name)
        if hit is not None and hit.snap is snap:
            return hit.ranked
        made = _reranked(hit, snap) if hit is not None else None
        kept = _Kept(snap, made, hit.below) if made is not None and hit is not None else _kept_anew(snap)
        with self._lock:
            self._kept.pop(snap.name, None)
            while len(self._kept) >= MAX_KEPT_PLANS:
                self._kept.pop(next(iter(self._kept)))
            self._kept[snap.name] = kept
        return kept.ranked


KEPT_RANKS = _KeptRanks()


def rank_key(task: Task, chains: Mapping[int, int]) -> RankKey:
    return RankKey(priority_rank(task), -chains.get(task.id, 0), task.id)


def ready_in_order(snap: PlanSnapshot, now: dt.datetime, after: int = 0) -> list[Task]:
    """The ready tasks of `snap` (a view: never changed), best first; with `after` (a
    cursor: the last id of the previous page), those ranked after that task as it ranks
    now (a task gone since: as a task without priority or chain)."""
    order, chains = KEPT_RANKS.of(snap)
    ready = [t for t in order if graph.can_start(t, now)]
    if not after:
        return ready
    cursor = snap.tasks.get(after)
    start = rank_key(cursor, chains) if cursor is not None else RankKey(NO_PRIORITY_RANK, 0, after)
    return [t for t in ready if rank_key(t, chains) > start]


def best_ready(snap: PlanSnapshot, now: dt.datetime, pick: Pick = ANY) -> Task | None:
    """The task the next claim takes, from `snap` as read under the plan's lock."""
    return next((t for t in KEPT_RANKS.of(snap).order if pick.matches(t) and graph.can_start(t, now)), None)


def _ids(ids: list[int]) -> str:
    shown = ", ".join(f"#{i}" for i in ids[:MAX_NAMED])
    return shown + (f" and {len(ids) - MAX_NAMED:,} more" if len(ids) > MAX_NAMED else "")


def _claim(task: Task, now: dt.datetime) -> str:
    """`#3 (alice, lease runs out at 2026-12-02T00:40:00Z, in 42 s)`."""
    owner = task.owner or "no owner"
    until = graph.lease_runs_out(task)
    if until is None:
        return f"#{task.id} ({owner}, no lease)"
    if until <= now:
        return f"#{task.id} ({owner}, lease ran out at {graph.stamp(until)}, blocked)"
    return f"#{task.id} ({owner}, lease runs out at {graph.stamp(until)}, in {int((until - now).total_seconds()):,} s)"


def _waiting_for(running: list[Task], waiting: int, now: dt.datetime) -> str:
    """The tasks in progress the rest waits for; with nothing left to start, stop unless a
    lease runs out (its owner may be gone)."""
    named = ", ".join(_claim(t, now) for t in running[:MAX_NAMED])
    named += f" and {len(running) - MAX_NAMED:,} more" if len(running) > MAX_NAMED else ""
    ends = [until for t in running if (until := graph.lease_runs_out(t)) is not None and until > now]
    first_end = graph.stamp(min(ends)) if ends else None
    if waiting:
        when = f", or at {first_end} when the first lease runs out" if first_end else ""
        wait = "task waits" if waiting == 1 else "tasks wait"
        return (
            f"{waiting:,} {wait} for the {len(running):,} in progress: {named}. "
            f"Wait, and call again when one of these completes{when}."
        )
    again = f", or call again at {first_end} in case its owner is gone and the lease runs out" if first_end else ""
    left = "task left is" if len(running) == 1 else "tasks left are all"
    return f"the {len(running):,} {left} in progress: {named}. Nothing is waiting to start: stop{again}."


def _gated_and_running(left: list[Task]) -> tuple[list[Task], list[Task]]:
    """The unfinished tasks that wait for a gate, and those in progress (no gated one)."""
    gated = [t for t in left if t.gate is not None]
    running = [t for t in left if t.status is TaskStatus.IN_PROGRESS and t.gate is None]
    return gated, running


def _gate_parts(plan: str, gated: list[Task], running: bool) -> list[str]:
    """What the gated tasks wait for; with nothing in progress either, that the agent stops."""
    if not gated:
        return []
    parts = [gates.waiting_line(plan, gated) + "."]
    if not running:
        parts.append("No agent completes these: tell the person, and stop.")
    return parts


class WaitHint(NamedTuple):
    work_left: bool  # a task the claim may take is unfinished
    wake_at: dt.datetime | None  # the first lease on one of those that runs out, if any


def wait_hint(snap: PlanSnapshot, now: dt.datetime, pick: Pick = ANY) -> WaitHint:
    """What a claim that waits (TaskUpdate waitSeconds) waits for, when nothing is ready:
    whether there is work left for it at all, and when a lease on it runs out (the only
    way a task becomes claimable with no write)."""
    left = [t for t in snap.tasks.values() if t.status is not TaskStatus.COMPLETED and pick.matches(t)]
    ends = [until for t in left if (until := graph.lease_runs_out(t)) is not None and until > now]
    return WaitHint(bool(left), min(ends) if ends else None)


def _label_counts(tasks: list[Task]) -> str:
    """`backend 3, ui 1, no label 1`: the labels ready tasks carry, the most common first."""
    counts: dict[str, int] = {}
    for t in tasks:
        for label in t.labels or ["no label"]:
            counts[label] = counts.get(label, 0) + 1
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{label} {n:,}" for label, n in ordered[:MAX_NAMED])
    return shown + (f" and {len(ordered) - MAX_NAMED:,} more labels" if len(ordered) > MAX_NAMED else "")


def nothing_ready_for(snap: PlanSnapshot, now: dt.datetime, pick: Pick) -> str:
    """Why no task the claim may take (`pick`) can be claimed now: what is left of those,
    then the tasks ready outside it (by label), or, with none, the plan's own reason."""
    if not pick.narrows():
        return nothing_ready(snap, now)
    what = pick.describe()
    mine = [t for t in snap.tasks.values() if pick.matches(t)]
    left = sum(t.status is not TaskStatus.COMPLETED for t in mine)
    if not mine:
        head = f"no task is {what}."
    elif not left:
        head = f"all {len(mine):,} tasks {what} are completed."
    elif left == 1:
        head = f"the one unfinished task {what} cannot start now."
    else:
        head = f"none of the {left:,} unfinished tasks {what} can start now."
    others = ready_in_order(snap, now)
    if not others:
        return f"{head} Nor can any other: {nothing_ready(snap, now)}"
    ready = "task is" if len(others) == 1 else "tasks are"
    return (
        f"{head} {len(others):,} other {ready} ready ({_label_counts(others)}): claim one with its label "
        f"or with no label or parent, or wait for those {what}."
    )


def nothing_ready(snap: PlanSnapshot, now: dt.datetime) -> str:
    """Why no task can be claimed now, and whether to wait (for what, until when) or stop."""
    tasks = snap.tasks
    unreadable = sorted(c.task_id for c in snap.corrupt)
    left = sorted(i for i, t in tasks.items() if t.status is not TaskStatus.COMPLETED)
    if not left and not unreadable:
        if not tasks:
            return "it has no tasks. Add some with TaskCreate, or stop: there is nothing to do here."
        return (
            f"all {len(tasks):,} tasks are completed. Stop: nothing is left to claim "
            "(verify the result against plan.md, then PlanArchive)."
        )
    gated, running = _gated_and_running([tasks[i] for i in left])
    waiting = len(left) - len(running) - len(gated)
    parts = _gate_parts(snap.name, gated, bool(running))
    if running:
        parts.append(_waiting_for(running, waiting, now))
    if unreadable:
        parts.append(f"Unreadable tasks {_ids(unreadable)} block the rest until fixed or removed by hand.")
    if not running and not unreadable and not gated:
        # Every open task is blocked by another open one, none started: only a cycle does that.
        parts.append(
            f"the {len(left):,} tasks left ({_ids(left)}) block each other in a cycle: "
            "remove one link (TaskUpdate removeBlockedBy), then call again."
        )
    return " ".join(parts)
