"""The planner: every operation the tools offer, as plain typed Python.

It enforces the contract's rules (bounds, ids, the dependency graph, claims) on
top of any PlanStore. Each write happens inside one store transaction, so a
refusal raised anywhere in it leaves the plan exactly as it was.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from . import graph
from .errors import (
    ClaimConflict,
    DependencyCycle,
    InvalidInput,
    NoCurrentPlan,
    PlanningError,
    PlanNotFinished,
    PlanNotFound,
    SelfDependency,
    TaskBlocked,
    TaskNotFound,
)
from .models import (
    MAX_DESCRIPTION,
    MAX_EDGES,
    MAX_METADATA_BYTES,
    MAX_PLAN_TASKS,
    MAX_PLAN_TEXT,
    MAX_SHORT_TEXT,
    MAX_SUBJECT,
    CorruptFile,
    PlanSnapshot,
    PlanSummary,
    Task,
    TaskSpec,
    TaskStatus,
    metadata_size,
)
from .names import check_date, check_plan_name, check_slug, parse_task_id, parse_task_ids, slugify, today
from .render import render_plan_md
from .store import PlanStore

DEFAULT_PAGE = 200
MAX_PAGE = 1_000
MAX_STEPS = 200
UPDATE_STATUSES = ("pending", "in_progress", "completed", "deleted")
LIST_STATUSES = ("pending", "in_progress", "completed", "ready", "blocked")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _text(value: Any, field: str, limit: int, *, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string.")
    if "\x00" in value:
        raise InvalidInput(f"{field} must not contain NUL characters.")
    if len(value) > limit:
        raise InvalidInput(f"{field} is {len(value):,} characters; the limit is {limit:,}. Shorten it.")
    if required and not value.strip():
        raise InvalidInput(f"{field} must not be empty.")
    return value.strip() if required else value


def _metadata(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput("metadata must be an object (JSON dictionary).")
    if metadata_size(value) > MAX_METADATA_BYTES:
        raise InvalidInput(f"metadata is larger than {MAX_METADATA_BYTES // 1024} KB; store less in it.")
    return value


def _edges(values: Any, field: str) -> list[int]:
    ids = parse_task_ids(values)
    if len(ids) > MAX_EDGES:
        raise InvalidInput(f"{field} lists {len(ids)} ids; at most {MAX_EDGES} at once.")
    return ids


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


class TaskPage(BaseModel):
    plan: PlanSummary
    tasks: list[Task]
    unreadable: list[CorruptFile]
    next_cursor: str | None = None
    open_blockers: dict[int, list[int]] = Field(default_factory=dict)


class Planner:
    """The rules of plans and tasks over a store. Holds no per-session state:
    callers pass the session's current plan in."""

    def __init__(self, store: PlanStore) -> None:
        self.store = store

    # -- which plan ------------------------------------------------------------

    def resolve(self, plan: str | None, current: str | None = None) -> str:
        if plan is not None and plan != "":
            name = check_plan_name(plan)
            self.store.is_archived(name)  # raises PlanNotFound
            return name
        active = self.store.active_plans()
        if current and current in active:
            return current
        if len(active) == 1:
            return active[0]
        raise NoCurrentPlan(active)

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
        title = _text(title, "title", MAX_SHORT_TEXT, required=True)
        analysis = _text(analysis, "analysis", MAX_PLAN_TEXT)
        approach = _text(approach, "approach", MAX_PLAN_TEXT)
        steps = list(steps or [])
        if len(steps) > MAX_STEPS:
            raise InvalidInput(f"steps has {len(steps)} items; at most {MAX_STEPS}.")
        steps = [_text(s, f"steps[{i + 1}]", MAX_SUBJECT * 10, required=True) for i, s in enumerate(steps)]
        slug = check_slug(name) if name else slugify(title)
        date = check_date(date) if date else today()
        specs = self._task_specs(tasks or [])
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

    def _task_specs(self, tasks: Sequence[TaskSpec | dict[str, Any]]) -> list[TaskSpec]:
        if len(tasks) > MAX_PLAN_TASKS:
            raise InvalidInput(f"tasks has {len(tasks)} items; at most {MAX_PLAN_TASKS} per PlanCreate.")
        specs: list[TaskSpec] = []
        for pos, raw in enumerate(tasks, start=1):
            try:
                spec = raw if isinstance(raw, TaskSpec) else TaskSpec.model_validate(raw)
            except ValidationError as e:
                first = e.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise InvalidInput(
                    f"tasks[{pos}] is invalid ({where}: {first['msg']}). Nothing was created; fix it and retry."
                ) from None
            for b in spec.blocked_by:
                if b == pos:
                    raise InvalidInput(f"tasks[{pos}] lists itself in blockedBy. Nothing was created.")
                if not 1 <= b <= len(tasks):
                    raise InvalidInput(
                        f"tasks[{pos}].blockedBy has position {b}; positions are 1..{len(tasks)} "
                        "in this tasks list. Nothing was created."
                    )
            specs.append(spec)
        cycle = graph.positional_cycle({i: s.blocked_by for i, s in enumerate(specs, start=1)})
        if cycle:
            path = " -> ".join(f"#{i}" for i in cycle)
            raise InvalidInput(f"The tasks' blockedBy positions form a cycle {path}. Nothing was created.")
        return specs

    def summaries(self, include_done: bool = False) -> list[PlanSummary]:
        names = self.store.active_plans()
        if include_done:
            names = names + self.store.archived_plans()
        out = []
        for n in names:
            try:
                out.append(self.store.snapshot(n).summary())
            except PlanNotFound:
                continue  # archived or removed between listing and reading
        return out

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
        subject = _text(subject, "subject", MAX_SUBJECT, required=True)
        description = _text(description, "description", MAX_DESCRIPTION)
        active_form = _text(active_form, "activeForm", MAX_SHORT_TEXT)
        owner = _text(owner, "owner", MAX_SHORT_TEXT)
        meta = {k: v for k, v in _metadata(metadata).items() if v is not None}
        before = _edges(blocked_by, "blockedBy")
        after = _edges(blocks, "blocks")
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
        """The task and its unfinished blockers (a blocker that cannot be read counts as open)."""
        task = self.get_task(plan, task_id)
        open_ids = []
        for b in task.blocked_by:
            try:
                if self.store.get_task(plan, b).status is not TaskStatus.COMPLETED:
                    open_ids.append(b)
            except PlanningError:
                open_ids.append(b)
        return task, open_ids

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
            subject = _text(subject, "subject", MAX_SUBJECT, required=True)
        if description is not None:
            description = _text(description, "description", MAX_DESCRIPTION)
        if active_form is not None:
            active_form = _text(active_form, "activeForm", MAX_SHORT_TEXT)
        if owner is not None:
            owner = _text(owner, "owner", MAX_SHORT_TEXT)
        meta = _metadata(metadata) if metadata is not None else None
        edges = {
            "addBlockedBy": _edges(add_blocked_by, "addBlockedBy"),
            "addBlocks": _edges(add_blocks, "addBlocks"),
            "removeBlockedBy": _edges(remove_blocked_by, "removeBlockedBy"),
            "removeBlocks": _edges(remove_blocks, "removeBlocks"),
        }
        with self.store.transaction(plan) as txn:
            work: dict[int, Task] = {}
            original: dict[int, Task] = {}

            def get(i: int) -> Task:
                if i not in work:
                    work[i] = txn.get(i)
                    original[i] = work[i].model_copy(deep=True)
                return work[i]

            task = get(tid)
            if status == "deleted":
                return self._delete(txn, plan, task, get, work)
            missing = [i for ids in edges.values() for i in ids if not txn.exists(i)]
            if missing:
                raise TaskNotFound(plan, missing)
            before = task.model_copy(deep=True)
            for b in edges["removeBlockedBy"]:
                graph.unlink(get(b), task)
            for c in edges["removeBlocks"]:
                graph.unlink(task, get(c))
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
                    blockers = graph.open_blockers(task, get)
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
                change.task = task
                return change
            now = _now()
            for t in work.values():
                if t != original[t.id]:
                    t.updated_at = now
                    txn.put(t)
            if change.completed:
                # From the snapshot (blockedBy is the truth): a corrupt or stale neighbour
                # must not make completing this task fail.
                snap = txn.snapshot()
                statuses = {i: t.status for i, t in snap.tasks.items()}
                change.unblocked = [
                    t for t in snap.tasks.values() if tid in t.blocked_by and graph.is_ready(t, statuses)
                ]
                change.all_done = not snap.corrupt and all(
                    t.status is TaskStatus.COMPLETED for t in snap.tasks.values()
                )
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
        for c in task.blocks:
            if txn.exists(c):
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
        if status is not None and status not in LIST_STATUSES:
            raise InvalidInput(f"status {status!r} is not one of {', '.join(LIST_STATUSES)}.")
        if limit is None:
            limit = DEFAULT_PAGE
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be a whole number from 1 to {MAX_PAGE}.")
        after = 0
        if cursor:
            try:
                after = parse_task_id(cursor)
            except InvalidInput:
                raise InvalidInput(
                    f"cursor {cursor!r} is not one this server gave; leave it out to start from the top."
                ) from None
        snap = self.store.snapshot(plan)
        statuses = {i: t.status for i, t in snap.tasks.items()}
        rows: list[Task] = []
        for t in snap.tasks.values():
            if status == "ready" and not graph.is_ready(t, statuses):
                continue
            if status == "blocked" and not graph.is_blocked(t, statuses):
                continue
            if status in ("pending", "in_progress", "completed") and t.status.value != status:
                continue
            if owner is not None and t.owner != owner:
                continue
            rows.append(t)
        rows = [t for t in rows if t.id > after]
        page, rest = rows[:limit], rows[limit:]
        upto = page[-1].id if rest else None  # report each unreadable file on one page only
        unreadable = (
            [c for c in snap.corrupt if c.task_id > after and (upto is None or c.task_id <= upto)]
            if status is None and owner is None
            else []
        )
        return TaskPage(
            plan=snap.summary(),
            tasks=page,
            unreadable=unreadable,
            next_cursor=str(page[-1].id) if rest else None,
            open_blockers={
                t.id: [b for b in t.blocked_by if statuses.get(b) is not TaskStatus.COMPLETED]
                for t in page
                if t.status is not TaskStatus.COMPLETED
            },
        )


_TRACKED = ("subject", "description", "active_form", "status", "owner", "blocked_by", "blocks", "metadata")
_FIELD_NAMES = {"active_form": "activeForm", "blocked_by": "blockedBy"}


def _changed_fields(before: Task, after: Task) -> list[str]:
    return [_FIELD_NAMES.get(f, f) for f in _TRACKED if getattr(before, f) != getattr(after, f)]
