"""The planner: every operation the tools offer, as plain typed Python.

It enforces the contract's rules (bounds, ids, the dependency graph, claims) on
top of any PlanStore. Each write happens inside one store transaction, so a
refusal raised anywhere in it leaves the plan exactly as it was.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from . import graph, queries, validate
from .errors import (
    BlockerUnreadable,
    ClaimConflict,
    CorruptTask,
    DependencyCycle,
    InvalidInput,
    PlanningError,
    PlanNotFinished,
    PlanNotFound,
    SelfDependency,
    StorageError,
    TaskBlocked,
    TaskNotFound,
)
from .models import (
    MAX_DESCRIPTION,
    MAX_METADATA_BYTES,
    MAX_PLAN_TEXT,
    MAX_SHORT_TEXT,
    MAX_SUBJECT,
    PlanSnapshot,
    PlanSummary,
    Progress,
    Task,
    TaskSpec,
    TaskStatus,
    metadata_size,
)
from .names import check_date, check_slug, parse_task_id, slugify, today
from .queries import TaskPage
from .render import render_plan_md
from .store import PlanStore

MAX_STEPS = 200
UPDATE_STATUSES = ("pending", "in_progress", "completed", "deleted")


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


class Planner:
    """The rules of plans and tasks over a store. Holds no per-session state:
    callers pass the session's current plan in."""

    def __init__(self, store: PlanStore) -> None:
        self.store = store

    def resolve(self, plan: str | None, current: str | None = None) -> str:
        return queries.resolve_plan(self.store, plan, current)

    # -- plans ---------------------------------------------------------------------

    def create_plan(
        self,
        title: str,
        analysis: str = "",
        approach: str = "",
        steps: Sequence[str] | None = None,
        name: str | None = None,
        date: str | None = None,
        tasks: Sequence[TaskSpec | dict[str, Any]] | None = None,
    ) -> PlanSnapshot:
        title = validate.text(title, "title", MAX_SHORT_TEXT, required=True)
        analysis = validate.text(analysis, "analysis", MAX_PLAN_TEXT)
        approach = validate.text(approach, "approach", MAX_PLAN_TEXT)
        steps = list(steps or [])
        if len(steps) > MAX_STEPS:
            raise InvalidInput(f"steps has {len(steps)} items; at most {MAX_STEPS}.")
        steps = [validate.text(s, f"steps[{i + 1}]", MAX_SUBJECT * 10, required=True) for i, s in enumerate(steps)]
        slug = check_slug(name) if name else slugify(title)
        date = check_date(date) if date else today()
        specs = validate.task_specs(tasks or [])
        now = _now()
        new_tasks = [
            Task(
                id=i,
                subject=s.subject,
                description=s.description,
                active_form=s.active_form,
                blocked_by=list(s.blocked_by),
                created_at=now,
                updated_at=now,
            )
            for i, s in enumerate(specs, start=1)
        ]
        for t in new_tasks:
            for b in t.blocked_by:
                new_tasks[b - 1].blocks.append(t.id)
        md = render_plan_md(title, analysis, approach, steps, new_tasks)
        created = self.store.create_plan(date, slug, md, new_tasks)
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
        active = self.store.active_plans()
        names = [current] if current and current in active else active
        for name in names:
            try:
                if self.store.summary(name).progress.in_progress:
                    return True
            except PlanningError:
                continue
        return False

    def archive(self, plan: str, force: bool = False) -> PlanSnapshot:
        def check(snap: PlanSnapshot) -> None:
            unfinished = [i for i, t in snap.tasks.items() if t.status is not TaskStatus.COMPLETED]
            unfinished += [c.task_id for c in snap.corrupt]
            if unfinished and not force:
                raise PlanNotFinished(plan, unfinished)

        self.store.archive(plan, check)
        return self.store.snapshot(plan)

    # -- tasks ---------------------------------------------------------------------

    def create_task(
        self,
        plan: str,
        subject: str,
        description: str = "",
        active_form: str | None = None,
        blocked_by: Any = None,
        blocks: Any = None,
        owner: str | None = None,
        metadata: Any = None,
    ) -> Task:
        subject = validate.text(subject, "subject", MAX_SUBJECT, required=True)
        description = validate.text(description, "description", MAX_DESCRIPTION)
        active_form = validate.text(active_form, "activeForm", MAX_SHORT_TEXT)
        owner = validate.text(owner, "owner", MAX_SHORT_TEXT)
        meta = {k: v for k, v in validate.metadata(metadata).items() if v is not None}
        before = validate.edges(blocked_by, "blockedBy")
        after = validate.edges(blocks, "blocks")
        with self.store.transaction(plan) as txn:
            missing = [i for i in (*before, *after) if not txn.exists(i)]
            if missing:
                raise TaskNotFound(plan, missing)
            new_id = txn.next_id()
            for b in before:
                for c in after:
                    chain = graph.path_via_blockers(b, c, txn.get)
                    if chain is not None:
                        # new -> c -> ... -> b -> new (chain runs b ... c along blockedBy)
                        raise DependencyCycle([new_id, *chain[::-1], new_id])
            now = _now()
            task = Task(
                id=new_id,
                subject=subject,
                description=description,
                active_form=active_form,
                owner=owner,
                metadata=meta,
                created_at=now,
                updated_at=now,
            )
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
        status: str | None = None,
        subject: str | None = None,
        description: str | None = None,
        active_form: str | None = None,
        owner: str | None = None,
        add_blocked_by: Any = None,
        add_blocks: Any = None,
        remove_blocked_by: Any = None,
        remove_blocks: Any = None,
        metadata: Any = None,
    ) -> TaskChange:
        tid = parse_task_id(task_id)
        if status is not None and status not in UPDATE_STATUSES:
            raise InvalidInput(f"status {status!r} is not one of {', '.join(UPDATE_STATUSES)}.")
        if subject is not None:
            subject = validate.text(subject, "subject", MAX_SUBJECT, required=True)
        if description is not None:
            description = validate.text(description, "description", MAX_DESCRIPTION)
        if active_form is not None:
            active_form = validate.text(active_form, "activeForm", MAX_SHORT_TEXT)
        if owner is not None:
            owner = validate.text(owner, "owner", MAX_SHORT_TEXT)
        meta = validate.metadata(metadata) if metadata is not None else None
        edges = {
            "addBlockedBy": validate.edges(add_blocked_by, "addBlockedBy"),
            "addBlocks": validate.edges(add_blocks, "addBlocks"),
            "removeBlockedBy": validate.edges(remove_blocked_by, "removeBlockedBy"),
            "removeBlocks": validate.edges(remove_blocks, "removeBlocks"),
        }
        with self.store.transaction(plan) as txn:
            work: dict[int, Task] = {}
            original: dict[int, Task] = {}

            def get(i: int) -> Task:
                if i not in work:
                    work[i] = txn.get(i)
                    original[i] = work[i].clone()
                return work[i]

            task = get(tid)
            if status == "deleted":
                return self._delete(txn, plan, task, get, work)
            # A link to a task with no file (a hand delete, an older version's crash) can still
            # be removed: there is no neighbour to update. An unknown id not linked is refused.
            gone = {i for i in edges["removeBlockedBy"] + edges["removeBlocks"] if not txn.exists(i)}
            missing = [i for i in edges["addBlockedBy"] + edges["addBlocks"] if not txn.exists(i)]
            missing += [b for b in edges["removeBlockedBy"] if b in gone and b not in task.blocked_by]
            missing += [c for c in edges["removeBlocks"] if c in gone and c not in task.blocks]
            if missing:
                raise TaskNotFound(plan, missing)
            before_ids = edges["addBlockedBy"] + edges["removeBlockedBy"]
            after_ids = edges["addBlocks"] + edges["removeBlocks"]
            before = task.clone()
            for b in edges["removeBlockedBy"]:
                graph.unlink(_blocker_to_unlink(b, gone, get), task)
            for c in edges["removeBlocks"]:
                graph.unlink(task, Task(id=c, subject="gone") if c in gone else get(c))
            for b in edges["addBlockedBy"]:
                self._link(get(b), task, get)
            for c in edges["addBlocks"]:
                self._link(task, get(c), get)
            if subject is not None:
                task.subject = subject
            if description is not None:
                task.description = description
            if active_form is not None:
                task.active_form = active_form
            if meta is not None:
                merged = {**task.metadata, **meta}
                task.metadata = {k: v for k, v in merged.items() if v is not None}
                if metadata_size(task.metadata) > MAX_METADATA_BYTES:
                    raise InvalidInput(f"metadata would exceed {MAX_METADATA_BYTES // 1024} KB; store less.")
            change = TaskChange(task_id=tid, plan=plan)
            if status is not None and status != task.status.value:
                new = TaskStatus(status)
                if new is TaskStatus.IN_PROGRESS:
                    try:
                        blockers = graph.open_blockers(task, get)
                    except CorruptTask as e:
                        raise BlockerUnreadable(plan, tid, e) from None
                    if blockers:
                        raise TaskBlocked(tid, blockers)
                task.status = new
                change.started = new is TaskStatus.IN_PROGRESS
                change.completed = new is TaskStatus.COMPLETED
            elif status == "in_progress" and owner and task.owner and owner != task.owner:
                raise ClaimConflict(tid, task.owner)
            if owner is not None:
                task.owner = owner
            change.changed = _changed_fields(before, task)
            if not change.changed:
                neighbours_changed = any(t != original[t.id] for t in work.values() if t.id != tid)
                if not neighbours_changed:
                    change.task = task
                    return change
                # This task's lists already named the link (stale), its neighbour's did not.
                change.changed = [f for f, ids in (("blockedBy", before_ids), ("blocks", after_ids)) if ids]
            now = _now()
            for t in work.values():
                if t != original[t.id]:
                    t.updated_at = now
                    txn.put(t)
            if change.completed:
                change.unblocked = graph.newly_ready(task, get)
                change.all_done = txn.all_completed()
            change.task = task
        return change

    def _link(self, blocker: Task, blocked: Task, get: graph.Lookup) -> None:
        if blocker.id == blocked.id:
            raise SelfDependency(blocker.id)
        if blocker.id in blocked.blocked_by:
            return
        cycle = graph.cycle_if_linked(blocker.id, blocked.id, get)
        if cycle:
            raise DependencyCycle(cycle)
        graph.link(blocker, blocked)

    def _delete(
        self, txn: Any, plan: str, task: Task, get: graph.Lookup, work: dict[int, Task]
    ) -> TaskChange:
        now = _now()
        for b in task.blocked_by:
            if txn.exists(b):
                other = get(b)
                graph.unlink(other, task)
                other.updated_at = now
                txn.put(other)
        # Dependents come from blockedBy (the truth), not from this task's own `blocks`,
        # which a crash or a hand edit may have left stale: no dangling edge survives.
        dependents = [t.id for t in txn.snapshot().tasks.values() if task.id in t.blocked_by]
        for c in sorted(set(dependents) | {c for c in task.blocks if txn.exists(c)}):
            other = get(c)
            graph.unlink(task, other)
            other.updated_at = now
            txn.put(other)
        txn.delete(task.id)
        return TaskChange(task_id=task.id, plan=plan, task=task, deleted=True, changed=["deleted"])

    def list_tasks(
        self,
        plan: str,
        status: str | None = None,
        owner: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> TaskPage:
        return queries.list_tasks(self.store, plan, status, owner, limit, cursor)


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


def _changed_fields(before: Task, after: Task) -> list[str]:
    return [_FIELD_NAMES.get(f, f) for f in _TRACKED if getattr(before, f) != getattr(after, f)]
