"""The planner: every operation the tools offer, as plain typed Python.

It enforces the contract's rules (bounds, ids, the dependency graph, claims) on
top of any PlanStore. Each write happens inside one store transaction, so a
refusal raised anywhere in it leaves the plan exactly as it was.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Sequence
from typing import Any, TypedDict, Unpack

from pydantic import BaseModel, Field

from . import gates, queries, update, validate
from .caller import NOBODY
from .errors import (
    DependencyCycle,
    InvalidInput,
    NotGated,
    NothingReady,
    PlanningError,
    PlanNotFinished,
    PlanNotFound,
    StorageError,
    TaskNotFound,
)
from .models import (
    MAX_PLAN_TEXT,
    MAX_SHORT_TEXT,
    MAX_SUBJECT,
    NewTask,
    PlanSnapshot,
    PlanSummary,
    Progress,
    Task,
    TaskPatch,
    TaskSpec,
    TaskStatus,
)
from .names import check_date, check_slug, parse_task_id, slugify, today
from .reminders import reminded_plans
from .rendering.render import render_plan_md
from .store import PlanContended, PlanStore, PlanTransaction, TriesLock
from .taskgraph import graph, ranking
from .verify import Verification

MAX_STEPS = 200

# Times a claim waits out another writer of its plan and looks again before it queues for the plan.
CLAIM_TRIES = 3


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class TaskChange(BaseModel):
    """What TaskUpdate did."""

    task: Task | None = None
    task_id: int
    plan: str
    changed: list[str] = Field(default_factory=list)
    deleted: bool = False
    started: bool = False
    completed: bool = False
    unblocked: list[Task] = Field(default_factory=list)
    all_done: bool = False


def _apply_changes(
    plan: str,
    txn: Any,
    work: update.Work,
    tasks: tuple[Task, Task],
    p: TaskPatch,
    edges: update.Edges,
    now: dt.datetime,
    by_person: bool,
) -> None:
    """The patch's links, parent and fields on `tasks` (as it was, as it becomes), then the
    gate's rule for an agent (gates.py)."""
    before, task = tasks
    update.apply_edges(txn, plan, task, edges, work.get)
    if "parent" in p.values:
        update.check_parent(plan, task.id, p.get("parent"), txn.exists, work.get)
    update.apply_fields(task, p)
    if not by_person:
        update.check_gate(plan, before, task, p, now)


def _note_author(p: TaskPatch, known_as: str | None, author: str | None, by: str) -> str:
    """Who a note is by: the owner named, else the caller's claim of the task, else its
    session's latest claim, else the writer the history names."""
    return p.get("owner") or known_as or author or by


class PlanFields(TypedDict, total=False):
    """PlanCreate's arguments besides the title, as a caller names them (each may be left out)."""

    analysis: str
    approach: str
    steps: Sequence[str] | None
    name: str | None  # the slug
    date: str | None
    tasks: Sequence[TaskSpec | dict[str, Any]] | None


class Planner:
    """The rules of plans and tasks over a store. Holds no per-session state:
    callers pass the session's current plan in."""

    def __init__(self, store: PlanStore, clock: graph.Clock = graph.utc_now) -> None:
        self.store = store
        self.clock = clock  # what leases are measured by (update.py); tests pass their own

    def resolve(self, plan: str | None, current: str | None = None) -> str:
        return queries.resolve_plan(self.store, plan, current)

    # -- plans ---------------------------------------------------------------------

    def create_plan(
        self, title: str, *, plan_md: str | None = None, by: str = NOBODY, **fields: Unpack[PlanFields]
    ) -> PlanSnapshot:
        """`fields`: PlanCreate's other arguments. `plan_md`: plan.md's text as someone
        approved it (Claude Code's plan mode), kept as it is instead of the one rendered from
        the other fields. `by`: the writer the history names (a Caller's `who`), here and in
        every write below."""
        title = validate.text(title, "title", MAX_SHORT_TEXT, required=True)
        analysis = validate.text(fields.get("analysis", ""), "analysis", MAX_PLAN_TEXT)
        approach = validate.text(fields.get("approach", ""), "approach", MAX_PLAN_TEXT)
        steps = list(fields.get("steps") or [])
        if len(steps) > MAX_STEPS:
            raise InvalidInput(f"steps has {len(steps)} items; at most {MAX_STEPS}.")
        steps = [validate.text(s, f"steps[{i + 1}]", MAX_SUBJECT * 10, required=True) for i, s in enumerate(steps)]
        name, date = fields.get("name"), fields.get("date")
        slug = check_slug(name) if name else slugify(title)
        date = check_date(date) if date else today()
        specs = validate.task_specs(fields.get("tasks") or [])
        now = _now()
        new_tasks = [
            Task(id=i, **s.model_dump(exclude_unset=False), created_at=now, updated_at=now)
            for i, s in enumerate(specs, start=1)
        ]
        for t in new_tasks:
            for b in t.blocked_by:
                new_tasks[b - 1].blocks.append(t.id)
        md = validate.text(plan_md, "approved plan", MAX_PLAN_TEXT) if plan_md else ""
        md = md or render_plan_md(title, analysis, approach, steps, new_tasks)
        created = self.store.create_plan(date, slug, md, new_tasks, by)
        return self.store.snapshot(created)

    def summaries(self, include_done: bool = False) -> list[PlanSummary]:
        names = self.store.active_plans()
        if include_done:
            names = names + self.store.archived_plans()
        out = []
        for n in names:
            try:
                out.append(self.store.summary(n))
            except PlanNotFound:
                continue  # archived or removed between listing and reading
            except StorageError as e:
                # One unreadable folder must not hide the other plans; show it as unreadable.
                out.append(PlanSummary(name=n, title=str(e), progress=Progress(total=1), unreadable=1))
        return out

    def has_work_in_progress(self, current: str | None) -> bool:
        """Does the current plan (before there is one: any active plan) have a task in
        progress? This decides the plan reminder. A plan that is gone or unreadable counts
        as idle: a reminder is never worth failing a call."""
        for name in reminded_plans(self.store.active_plans(), current):
            try:
                if self.store.summary(name).progress.in_progress:
                    return True
            except PlanningError:
                continue
        return False

    def archive(self, plan: str, force: bool = False, *, by: str = NOBODY) -> PlanSnapshot:
        def check(snap: PlanSnapshot) -> None:
            unfinished = [i for i, t in snap.tasks.items() if t.status is not TaskStatus.COMPLETED]
            unfinished += [c.task_id for c in snap.corrupt]
            if unfinished and not force:
                raise PlanNotFinished(plan, unfinished)

        self.store.archive(plan, check, by)
        return self.store.snapshot(plan)

    # -- tasks ---------------------------------------------------------------------

    def create_task(
        self, plan: str, new: NewTask | str | None = None, description: str = "", *, by: str = NOBODY, **fields: Any
    ) -> Task:
        """Create TaskCreate's task (a NewTask, or its subject, description and other fields)
        in one transaction, linked both ways to the tasks it names."""
        new = NewTask.of(new, description, fields)
        values = update.created_values(new)
        before = validate.edges(new.blocked_by, "blockedBy")
        after = validate.edges(new.blocks, "blocks")
        with self.store.transaction(plan, by) as txn:
            missing = [i for i in (*before, *after) if not txn.exists(i)]
            if missing:
                raise TaskNotFound(plan, missing)
            new_id = txn.next_id()
            update.check_parent(plan, new_id, values["parent"], txn.exists, txn.get)
            for b in before:
                for c in after:
                    chain = graph.path_via_blockers(b, c, txn.get)
                    if chain is not None:
                        # new -> c -> ... -> b -> new (chain runs b ... c along blockedBy)
                        raise DependencyCycle([new_id, *chain[::-1], new_id])
            now = _now()
            task = Task(id=new_id, **values, created_at=now, updated_at=now)
            for b in before:
                other = txn.get(b)
                graph.link(other, task)
                other.updated_at = now
                txn.put(other)
            for c in after:
                other = txn.get(c)
                graph.link(task, other)
                other.updated_at = now
                txn.put(other)
            txn.put(task)
        return task

    def get_task(self, plan: str, task_id: Any) -> Task:
        return self.store.get_task(plan, parse_task_id(task_id))

    def get_task_with_blockers(self, plan: str, task_id: Any) -> tuple[Task, list[int]]:
        """The task and its unfinished blockers."""
        task = self.get_task(plan, task_id)
        return task, self.open_blockers(plan, task)

    def open_blockers(self, plan: str, task: Task) -> list[int]:
        """Blockers not completed; one that cannot be read counts as open, a deleted one not."""
        return graph.open_blockers(task, lambda b: self.store.get_task(plan, b), unreadable_open=True)

    def update_task(
        self,
        plan: str,
        task_id: Any,
        patch: TaskPatch | None = None,
        *,
        by_person: bool = False,
        known_as: str | None = None,
        author: str | None = None,
        verification: Verification | None = None,
        by: str = NOBODY,
        **changes: Any,
    ) -> TaskChange:
        """Apply TaskUpdate's changes (a TaskPatch, or its fields as keywords) in one
        transaction: dependencies, then fields, then status, owner and lease. The lease's
        clock is read inside the transaction, so the claim is judged at the moment it
        holds the plan. `task_id`: an id, "next", or the update.Target its caller decided.
        taskId "next" claims the best ready task (ranking.py), chosen from
        the plan as read under its lock: claims racing for it get different tasks.
        `by_person`: a person's change (approve), which no gate refuses (gates.py).
        `known_as`: the owner the caller is known as when it names none (its session's claim
        of this task): a former owner is refused (update.check_not_taken_over). A note is
        by the owner named, else `known_as`, else `author` (the session's latest claim), else
        `by`, the writer the history names.
        `verification`: the server's record of the task's checks, written with the change (alone
        when the patch is empty); refused when the task's record is no longer the one it follows."""
        raw = patch if patch is not None else TaskPatch(**changes)
        tid, next_claim = task_id if isinstance(task_id, update.Target) else update.target(task_id, raw)
        p, edges = update.checked(raw)
        pick = update.next_pick(next_claim, raw, p)
        if next_claim:
            self.complete_passed_gates(plan, by=by)  # their dependents may be the next task
        with contextlib.ExitStack() as held:
            txn = self._locked(held, plan, by, pick if next_claim else None)
            now = self.clock()
            if next_claim:
                tid = self._next_ready(plan, txn, now, pick)
            work = update.Work(txn)
            task = work.get(tid)
            if not by_person:
                update.check_not_taken_over(task, known_as, p, edges, now)
            if p.status == "deleted":
                return self._delete(txn, plan, task, work.get)
            before = task.clone()
            if verification is not None:
                verification.apply(task)
            _apply_changes(plan, txn, work, (before, task), p, edges, now, by_person)
            update.apply_note(task, p.note, _note_author(p, known_as, author, by), now)
            change = TaskChange(task_id=tid, plan=plan, task=task)
            started, completed = update.apply_status(plan, task, p, work.get, now)
            change.started, change.completed = started, completed
            if completed:
                update.check_parts(task, txn.read_tasks())
            change.changed = update.changed_fields(before, task)
            if not change.changed and verification is None:
                if not work.neighbours_changed(tid):
                    return change
                # This task's lists already named the link (stale), its neighbour's did not.
                change.changed = edges.fields()
            work.write(graph.stamp(now))
            if change.completed:
                change.unblocked = graph.newly_ready(task, work.get, now)
                change.all_done = txn.all_completed()
        return change

    def approve(self, plan: str, task_id: Any, *, by: str = NOBODY) -> TaskChange:
        """A person completes a gated task (gates.py): `planning-mcp approve`, the web
        board's Approve button, the client's form."""
        task = self.get_task(plan, task_id)
        if not gates.is_gated(task):
            raise NotGated(task.id, task.status.value)
        return self.update_task(plan, task.id, TaskPatch(status=TaskStatus.COMPLETED.value), by_person=True, by=by)

    def complete_passed_gates(self, plan: str, *, by: str = NOBODY) -> list[TaskChange]:
        """Complete the plan's tasks whose time gate has passed (a parent with unfinished
        parts stays as it is: its parts come first)."""
        now = self.clock()
        due = gates.passed_time_gates(self.store.view(plan).tasks.values(), now)
        done = []
        for task_id in due:
            try:
                done.append(self.update_task(plan, task_id, TaskPatch(status=TaskStatus.COMPLETED.value), by=by))
            except PlanningError:
                continue  # unfinished parts, or gone since: the next call tries again
        return done

    def _locked(self, held: contextlib.ExitStack, plan: str, by: str, claim: ranking.Pick | None) -> PlanTransaction:
        """The plan locked for the write (its lock `held` until the block ends). For a claim
        of the next task (`claim`: what it may take), once the committed plan has a ready
        task for it (_something_ready); a store that can (TriesLock) does not queue the
        claim behind another writer but waits that writer out, and the claim looks again:
        of the agents one change wakes, those the first left nothing are refused without
        taking the lock. After CLAIM_TRIES such waits the claim queues as any write does."""
        if claim is not None and isinstance(self.store, TriesLock):
            for _ in range(CLAIM_TRIES):
                self._something_ready(plan, claim)
                with contextlib.suppress(PlanContended):
                    return held.enter_context(self.store.try_transaction(plan, by))
        if claim is not None:
            self._something_ready(plan, claim)
        return held.enter_context(self.store.transaction(plan, by))

    def _something_ready(self, plan: str, pick: ranking.Pick) -> None:
        """NothingReady, before the plan's lock is asked for, when the committed plan has no
        ready task for the claim: the agents a change wakes (a waiting claim) then never
        queue for the lock only to find nothing. A ready task seen here is taken, or found
        gone, under the lock (_next_ready)."""
        snap = self.store.view(plan)
        if not snap.archived:  # an archived plan is refused as the transaction refuses it
            self._best_ready(plan, snap, self.clock(), pick)

    def _next_ready(self, plan: str, txn: Any, now: dt.datetime, pick: ranking.Pick) -> int:
        """The id of the best ready task `pick` allows, or NothingReady saying what the work
        waits for."""
        return self._best_ready(plan, txn.view(), now, pick)  # read under the lock, before anything is staged

    @staticmethod
    def _best_ready(plan: str, snap: PlanSnapshot, now: dt.datetime, pick: ranking.Pick) -> int:
        best = ranking.best_ready(snap, now, pick)
        if best is None:
            hint = ranking.wait_hint(snap, now, pick)
            raise NothingReady(plan, ranking.nothing_ready_for(snap, now, pick), hint.work_left, hint.wake_at)
        return best.id

    def _delete(self, txn: Any, plan: str, task: Task, get: graph.Lookup) -> TaskChange:
        now = _now()
        tasks = txn.snapshot().tasks.values()
        update.check_parts(task, tasks, deleting=True)
        for b in task.blocked_by:
            if txn.exists(b):
                other = get(b)
                graph.unlink(other, task)
                other.updated_at = now
                txn.put(other)
        # Dependents come from blockedBy (the truth), not from this task's own `blocks`,
        # which a crash or a hand edit may have left stale: no dangling edge survives.
        dependents = [t.id for t in tasks if task.id in t.blocked_by]
        for c in sorted(set(dependents) | {c for c in task.blocks if txn.exists(c)}):
            other = get(c)
            graph.unlink(task, other)
            other.updated_at = now
            txn.put(other)
        txn.delete(task.id)
        return TaskChange(task_id=task.id, plan=plan, task=task, deleted=True, changed=["deleted"])
