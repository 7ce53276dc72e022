"""One function per tool: the contract's behaviour and texts, ready for any adapter.

Each action takes the Caller it runs for (planning_core/caller.py: who writes, and the
session), does one planner call, keeps the session's bookkeeping (current plan, todo reset)
and returns the compact text the model reads beside the structured data. The MCP server only
forwards arguments.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, Unpack

from pydantic import BaseModel

from . import done, gates, history, queries, update
from .caller import Caller
from .errors import CurrentPlanGone, InvalidPlanName, PlanningError, PlanNotFound
from .events import EventHooks, task_payload
from .history import EVERYTHING, Logged
from .import_export import copying, importing
from .models import NewTask, PlanSnapshot, PlanSummary, Task, TaskPatch, TaskStatus, TodoItem
from .names import check_plan_name
from .outcomes import (
    PlanArchivedResult,
    PlanCreated,
    PlanListed,
    TaskCreated,
    TaskFetched,
    TaskListed,
    TaskUpdated,
    TodoListed,
)
from .pages import Pages
from .planner import PlanFields, Planner, TaskChange
from .queries import TaskPage
from .rendering import render, timeline
from .rendering.plan_text import PlanText, read_plan
from .rendering.rows import task_row
from .store import History, PlanFolders, PlanStore, Recoverable
from .verification import Progress, StillRunning, Verifier
from .verify import CheckFile

T = TypeVar("T", bound=BaseModel)

TODO_RESET_NOTE = "Todo list reset: a plan task started or completed, so plan the next step afresh."
CREATED_PLAN = "Created plan "  # PlanCreate's answer starts with this and the plan's name


def created_plan_name(text: str) -> str | None:
    """The plan named in a PlanCreate answer's text (the Claude Code hook sees only the
    text): the word after CREATED_PLAN, if it is a plan name."""
    _, found, rest = text.partition(CREATED_PLAN)
    if not found:
        return None
    word = rest.split(maxsplit=1)[0] if rest.split() else ""
    try:
        return check_plan_name(word)
    except InvalidPlanName:
        return None


@dataclass
class Outcome(Generic[T]):
    text: str
    data: T
    # `data` as sent (JSON types, camelCase), when the action built it already: a TaskList
    # page is made of rows kept per task, not dumped again row by row on every call.
    wire: dict[str, Any] | None = None

    def structured(self) -> dict[str, Any]:
        """The structured content of the answer: `data` in its JSON form."""
        if self.wire is not None:
            return self.wire
        return self.data.model_dump(mode="json", by_alias=True, exclude_none=True)


class Actions:
    def __init__(self, planner: Planner, hooks: EventHooks | None = None, verifier: Verifier | None = None) -> None:
        self.planner = planner
        self.hooks = hooks  # event hooks (planning_core.events); configured at server start only
        self.verifier = verifier  # the checks a task's criteria name (verification.py)
        self.pages = Pages()  # TaskList rows and pages kept between calls

    @classmethod
    def over(cls, store: PlanStore, hooks: EventHooks | None = None, checks: CheckFile | None = None) -> Actions:
        """The actions on `store`: how every server module and command reaches the core.
        `checks`: the check file a task's criteria may name (a served store's), run by a
        Verifier over the same planner."""
        planner = Planner(store)
        return cls(planner, hooks, None if checks is None else Verifier(planner, checks))

    def _payload(self, plan: str, task: Task, subject: str | None = None, owner: str | None = None) -> dict[str, Any]:
        store = self.planner.store
        try:
            # A folder for hook scripts to look into where there is one, else where it is.
            where = str(store.plan_folder(plan)) if isinstance(store, PlanFolders) else store.location(plan)
        except PlanningError:
            where = ""  # archived or removed meanwhile: the hook still learns which task
        return task_payload(
            store.describe(),
            plan,
            where,
            task.id,
            subject if subject is not None else task.subject,
            task.description,
            owner if owner is not None else task.owner,
        )

    def _created(self, plan: str, tasks: Sequence[Task]) -> None:
        if self.hooks is not None and self.hooks.has("TaskCreated"):
            for task in tasks:
                self.hooks.task_created(self._payload(plan, task))

    def _plan(self, caller: Caller, plan: str | None) -> str:
        try:
            name = self.planner.resolve(plan, caller.session.current_plan)
        except CurrentPlanGone:
            caller.session.current_plan = None  # said once; the next call falls back to the usual rule
            raise
        if plan:
            caller.session.current_plan = name
        return name

    # -- plans ---------------------------------------------------------------------

    def plan_create(self, caller: Caller, title: str, **fields: Unpack[PlanFields]) -> Outcome[PlanCreated]:
        for spec in fields.get("tasks") or ():
            self._check_names(spec.get("acceptance") if isinstance(spec, dict) else spec.acceptance)
        snap = self.planner.create_plan(title, by=caller.who, **fields)
        caller.session.current_plan = snap.name
        self._created(snap.name, list(snap.tasks.values()))
        summary = snap.summary()
        board = render.task_board(summary, list(snap.tasks.values()), {t.id: t.blocked_by for t in snap.tasks.values()})
        text = f"{CREATED_PLAN}{snap.name} ({len(snap.tasks)} tasks); it is now the current plan.\n{board}"
        return Outcome(text, PlanCreated(plan=summary, task_ids=list(snap.tasks)))

    def plan_from_text(self, caller: Caller, text: str) -> str:
        """A plan made from an approved plan's text (Claude Code's plan mode): plan.md is the
        text, its steps (plan_text.read_plan) the tasks. The new plan's name."""
        plan = read_plan(text)
        tasks = [
            {
                "subject": s.subject,
                "description": "\n".join(s.description),
                "blockedBy": s.blocked_by,
                "acceptance": s.acceptance,
            }
            for s in plan.steps
        ]
        snap = self.planner.create_plan(plan.title, tasks=tasks, plan_md=text, by=caller.who)
        caller.session.current_plan = snap.name
        self._created(snap.name, list(snap.tasks.values()))
        return snap.name

    def plan_revise(self, caller: Caller, name: str, plan: PlanText) -> str:
        """The plan revised to an approved plan's steps: new steps are added (each after the
        one before it), steps no longer in the plan are deleted while still pending; done or
        started work is never removed. What was done, in one line."""
        tasks = self.planner.store.snapshot(name).tasks
        by_subject = {t.subject: t for t in tasks.values()}
        wanted = {s.subject for s in plan.steps}
        removed = [t.id for t in tasks.values() if t.subject not in wanted and t.status is TaskStatus.PENDING]
        for task_id in removed:
            self.planner.update_task(name, task_id, status="deleted", by=caller.who)
        added, before = [], None
        for step in plan.steps:
            task = by_subject.get(step.subject)
            if task is None:
                task = self.planner.create_task(
                    name,
                    step.subject,
                    "\n".join(step.description),
                    blocked_by=[before] if before else None,
                    acceptance=step.acceptance,
                    by=caller.who,
                )
                self._created(name, [task])
                added.append(task.id)
            before = task.id
        caller.session.current_plan = name
        return (
            f"Revised plan {name} from the approved plan: {len(added)} tasks added, "
            f"{len(removed)} pending tasks removed."
        )

    def plan_import(
        self, caller: Caller, plan: importing.ImportedPlan, name: str | None = None
    ) -> importing.ImportResult:
        """Another tool's tasks into the plan `name` (importing.import_plan: else the active
        plan titled as the import is, else a new plan)."""
        return importing.import_plan(self.planner.store, plan, name, caller.who)

    def plan_list(self, caller: Caller, include_done: bool = False) -> Outcome[PlanListed]:
        plans = self.planner.summaries(include_done)
        lines = [render.plan_line(p) + (" (archived)" if p.archived else "") for p in plans]
        text = "\n".join(lines) or render.no_plans_text(0 if include_done else len(self.planner.store.archived_plans()))
        return Outcome(text, PlanListed(plans=plans))

    def plan_archive(self, caller: Caller, plan: str | None = None, force: bool = False) -> Outcome[PlanArchivedResult]:
        name = self._plan(caller, plan)
        snap = self.planner.archive(name, force, by=caller.who)
        if caller.session.current_plan == name:
            caller.session.current_plan = None
        summary = snap.summary()
        location = self.planner.store.location(name)
        text = f"Archived plan {name} {render.progress_tag(summary)} to {location}."
        return Outcome(text, PlanArchivedResult(plan=summary, location=location))

    # -- tasks ---------------------------------------------------------------------

    def task_create(
        self,
        caller: Caller,
        new: NewTask | str | None = None,
        description: str = "",
        plan: str | None = None,
        **fields: Any,
    ) -> Outcome[TaskCreated]:
        """TaskCreate: a NewTask, or its subject, description and other fields."""
        name = self._plan(caller, plan)
        new = NewTask.of(new, description, fields)
        self._check_names(new.values.get("acceptance"))
        task = self.planner.create_task(name, new, by=caller.who)
        self._created(name, [task])
        try:
            open_ids = self.planner.open_blockers(name, task)
        except PlanningError:  # the task is created; an unreadable blocker must not say otherwise
            open_ids = list(task.blocked_by)
        return Outcome(render.created_text(task), TaskCreated(plan=name, task=task_row(task, open_ids)))

    def _check_names(self, acceptance: Any) -> None:
        if self.verifier is not None and isinstance(acceptance, list):
            self.verifier.check_names(acceptance)

    def task_update(
        self,
        caller: Caller,
        task_id: Any,
        plan: str | None = None,
        patch: TaskPatch | None = None,
        progress: Progress | None = None,
        **changes: Any,
    ) -> Outcome[TaskUpdated]:
        """`patch` (what the tool sends), or its fields as keywords. `progress`: told how a
        completion's checks go while they run."""
        patch = patch if patch is not None else TaskPatch(**changes)
        name = self._plan(caller, plan)
        self._check_names(patch.get("acceptance"))
        aim = update.target(task_id, patch)  # the next-claim rule, decided once for the call
        if patch.status == TaskStatus.COMPLETED.value and self.hooks is not None and self.hooks.has("TaskCompleted"):
            # Before the write and outside the plan's lock: a slow check blocks no other writer.
            current = self.planner.get_task(name, aim.task_id)
            if current.status is not TaskStatus.COMPLETED:
                payload = self._payload(name, current, patch.get("subject"), patch.get("owner"))
                self.hooks.check_completion(payload)
        known_as = self._known_as(caller, name, aim, patch)
        verified = self._verified(name, aim, patch, progress, known_as, caller.who)
        if isinstance(verified, StillRunning):
            data = TaskUpdated(plan=name, task_id=verified.task_id, changed=[], status=verified.status)
            return Outcome(verified.text, data)
        change = verified or self.planner.update_task(
            name, aim, patch, known_as=known_as, author=caller.session.known_as(), by=caller.who
        )
        _keep_claim(caller, name, patch, change)
        todo_reset = (change.started or change.completed) and caller.session.todo.clear()
        claimed = change.task if change.task is not None and aim.next_claim else None
        return _updated(name, change, todo_reset, claimed)

    @staticmethod
    def _known_as(caller: Caller, plan: str, aim: update.Target, patch: TaskPatch) -> str | None:
        """The owner an update naming none is known by: its session's claim of the task."""
        if patch.get("owner") or aim.next_claim:
            return None
        return caller.session.claimed_as(plan, aim.task_id)

    def waits_for_person(self, caller: Caller, task_id: Any, plan: str | None = None) -> Task | None:
        """The task, when it is unfinished and waits for a person's approval (gates.py)."""
        task = self.planner.get_task(self._plan(caller, plan), task_id)
        return task if gates.is_gated(task) and task.gate == gates.HUMAN else None

    def approve(self, caller: Caller, task_id: Any, plan: str | None = None) -> Outcome[TaskUpdated]:
        """A person approves a gated task (gates.py): the web board's Approve button."""
        name, change = self.approval(caller, task_id, plan)
        return _updated(name, change, False)

    def approval(self, caller: Caller, task_id: Any, plan: str | None = None) -> tuple[str, TaskChange]:
        """A person approves a gated task: the plan's name and the change (the command
        `approve` says it in its own words)."""
        name = self._plan(caller, plan)
        return name, self.planner.approve(name, task_id, by=caller.who)

    def work_left(self, caller: Caller, plan: str, mine: Sequence[str] = ()) -> done.WorkLeft:
        """What is left in the plan for an agent whose owner names are `mine` (done.work_left);
        an active plan's time gates that have passed are completed first, as the next claim
        completes them."""
        if not self.planner.store.is_archived(plan):
            self.planner.complete_passed_gates(plan, by=caller.who)
        return done.work_left(self.planner.store.view(plan), self.planner.clock(), mine)

    def _verified(
        self, plan: str, aim: update.Target, patch: TaskPatch, progress: Progress | None, known_as: str | None, by: str
    ) -> TaskChange | StillRunning | None:
        """A completion of a task that names checks, made once they pass (verification.py)."""
        if patch.status != TaskStatus.COMPLETED.value or self.verifier is None:
            return None
        return self.verifier.complete(plan, aim.task_id, patch, progress, known_as, by)

    def task_list(
        self, caller: Caller, plan: str | None = None, **filters: Unpack[queries.PageFilters]
    ) -> Outcome[TaskListed]:
        name = self._plan(caller, plan)
        query = queries.page_query(**filters)  # refused before the plan is read
        page = self.pages.page(self.planner.store.view(name), query, self.planner.clock())
        return Outcome(page.text, page.data, page.wire)

    # -- what the server reads besides the tools (instructions, resources, prompts) ------

    def tasks_page(self, plan: str, query: queries.PageQuery) -> TaskPage:
        """A page of the plan's board as TaskList reads it (queries.page_of), for the plan
        resource and the prompts: `query` made once by its caller."""
        return queries.page_of(self.planner.store.view(plan), query, self.planner.clock())

    def summaries(self) -> list[PlanSummary]:
        """Every active plan's summary (an unreadable one as unreadable)."""
        return self.planner.summaries()

    def resolve(self, plan: str | None, current: str | None) -> str:
        """The plan a call names, or the current one (queries.resolve_plan)."""
        return self.planner.resolve(plan, current)

    def get_task(self, plan: str, task_id: Any) -> Task:
        return self.planner.get_task(plan, task_id)

    def has_work(self, current: str | None) -> bool:
        """Does the current plan (else any active plan) have a task in progress? (reminders)"""
        return self.planner.has_work_in_progress(current)

    def clock(self) -> dt.datetime:
        """The time leases are judged at."""
        return self.planner.clock()

    # -- what the commands and the board read (they print or serve it as it is) ---------

    def describe(self) -> str:
        """Where the plans are, for a person (the store's own words)."""
        return self.planner.store.describe()

    def active_plans(self) -> list[str]:
        """The active plans' names, oldest first."""
        return self.planner.store.active_plans()

    def plan_title(self, plan: str) -> str:
        return self.planner.store.title(plan)

    def plan_md(self, plan: str) -> str:
        """The plan's plan.md as written."""
        return self.planner.store.read_plan_md(plan)

    def snapshot(self, plan: str) -> PlanSnapshot:
        """The plan and its tasks, the caller's own copy."""
        return self.planner.store.snapshot(plan)

    def view(self, plan: str) -> PlanSnapshot:
        """The plan and its tasks, shared and read-only: no copy of every task."""
        return self.planner.store.view(plan)

    def location(self, plan: str) -> str:
        """Where the plan is kept (a folder, or the database's name for it)."""
        return self.planner.store.location(plan)

    def task_file_place(self, plan: str, file: str) -> str:
        """Where one of the plan's task files is: its path on this machine, else the
        backend's location and the file's name."""
        store = self.planner.store
        try:
            if isinstance(store, PlanFolders):
                return str(store.plan_folder(plan) / file)
            return f"{store.location(plan)} {file}"
        except PlanNotFound:
            return f"{plan} {file}"

    def kept_in_folders(self) -> bool:
        """Are the plans folders on this machine (else rows in a database)?"""
        return isinstance(self.planner.store, PlanFolders)

    def history_page(self, plan: str, limit: int, cursor: str | None) -> tuple[list[Logged], str | None]:
        """A page of the plan's history, newest first, and the next page's cursor
        (timeline.log_page)."""
        return timeline.log_page(self.planner.store, plan, limit, cursor)

    def latest_history(self, limit: int) -> list[Logged]:
        """The active plans' latest `limit` events, newest first; none from a store that
        keeps no history."""
        store = self.planner.store
        found = store.events_since(EVERYTHING, limit) if isinstance(store, History) else []
        return history.newest(found, limit)

    def since_text(self, last_seen: float | None) -> str:
        """What happened in the plans since `last_seen` (else in the last day), for an agent
        coming back (timeline.since_text); "" when nothing did."""
        return timeline.since_text(self.planner.store, last_seen)

    def recovered(self, caller: Caller) -> list[str]:
        """What the store repaired after a crash (Recoverable), a line each; nothing from a
        store that needs no repair."""
        store = self.planner.store
        return store.recover(caller.who) if isinstance(store, Recoverable) else []

    def plans_copied(
        self, caller: Caller, target: Actions, on_plan: Callable[[copying.PlanCopy], None] | None = None
    ) -> copying.CopyReport:
        """Every plan, active and archived, copied from this store into `target`'s
        (copying.copy_plans: never over a plan of the same name). A write, so it takes its
        caller as every write does; the copy keeps each plan's history as written, so no
        entry names it."""
        return copying.copy_plans(self.planner.store, target.planner.store, on_plan)

    def task_get(self, caller: Caller, task_id: Any, plan: str | None = None) -> Outcome[TaskFetched]:
        name = self._plan(caller, plan)
        task, open_blockers = self.planner.get_task_with_blockers(name, task_id)
        recent = timeline.task_history(self.planner.store, name, task.id)  # last lines only
        return Outcome(
            render.task_detail(task, open_blockers) + (f"\n{recent}" if recent else ""),
            TaskFetched(plan=name, task=task, open_blockers=open_blockers),
        )

    # -- todo ------------------------------------------------------------------------

    def todo(
        self, caller: Caller, items: Sequence[TodoItem | dict[str, Any]], topic: str | None = None
    ) -> Outcome[TodoListed]:
        caller.session.todo.replace(items, topic)
        todo = caller.session.todo
        done = sum(i.status == TaskStatus.COMPLETED.value for i in todo.items)
        return Outcome(todo.render(), TodoListed(topic=todo.topic, items=todo.items, done=done, total=len(todo.items)))


def _keep_claim(caller: Caller, plan: str, patch: TaskPatch, change: TaskChange) -> None:
    """The session remembers a claim it made of the task (in progress under the owner it
    named), and forgets one once the task is no longer held."""
    task = change.task
    if task is None:
        return
    held = not change.deleted and task.status is TaskStatus.IN_PROGRESS and bool(task.owner)
    if held and patch.get("owner") == task.owner:
        caller.session.keep_claim(plan, task.id, task.owner)
    elif not held:
        caller.session.keep_claim(plan, task.id, None)


def _updated(name: str, change: TaskChange, todo_reset: bool, claimed: Task | None = None) -> Outcome[TaskUpdated]:
    """TaskUpdate's answer: the text and the data of one change."""
    text = render.updated_text(change.task_id, change.changed, change.unblocked, change.all_done, change.deleted)
    if claimed is not None:
        text += "\n" + render.claimed_line(claimed)
    if todo_reset:
        text += "\n" + TODO_RESET_NOTE
    data = TaskUpdated(
        plan=name,
        task_id=change.task_id,
        changed=change.changed,
        deleted=change.deleted,
        status=None if change.deleted or change.task is None else change.task.status.value,
        unblocked=[t.id for t in change.unblocked],
        all_done=change.all_done,
        todo_reset=todo_reset,
    )
    return Outcome(text, data)
