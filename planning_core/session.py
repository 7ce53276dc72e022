"""Per-session state and the reminder policy (after 5 quiet rounds for a plan, 3 for the todo list).

A round is one tool call answered for a session, refused calls included. The
call that changes the plan (or the todo list) is round 0; a reminder is due on
every PLAN_INTERVAL-th (TODO_INTERVAL-th) quiet round after it, and only while
there is work in progress.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .models import TodoItem
from .todo import TodoList

PLAN_REMINDER = "<reminder>You have an active session plan. Check TaskList and update task status.</reminder>"
TODO_REMINDER = "<reminder>Your todo list has unfinished items. Update it with the todo tool.</reminder>"
PLAN_INTERVAL = 5
TODO_INTERVAL = 3

PLAN_CHANGING_TOOLS = frozenset({"PlanCreate", "TaskCreate", "TaskUpdate", "PlanArchive"})
TODO_TOOL = "todo"
MAX_CLAIMS_KEPT = 32  # the session's latest claims it is known by (Session.claims)


@dataclass
class ReminderClock:
    plan_quiet: int = 0
    todo_quiet: int = 0

    def tick(self, *, plan_changed: bool, todo_changed: bool) -> None:
        self.plan_quiet = 0 if plan_changed else self.plan_quiet + 1
        self.todo_quiet = 0 if todo_changed else self.todo_quiet + 1

    def plan_due(self) -> bool:
        return self.plan_quiet > 0 and self.plan_quiet % PLAN_INTERVAL == 0

    def todo_due(self) -> bool:
        return self.todo_quiet > 0 and self.todo_quiet % TODO_INTERVAL == 0


def _changes(tool: str, succeeded: bool) -> tuple[bool, bool]:
    """(plan changed, todo changed) by one call: a refused call changed nothing."""
    return succeeded and tool in PLAN_CHANGING_TOOLS, succeeded and tool == TODO_TOOL


def plan_check_due(clock: ReminderClock, tool: str, *, succeeded: bool) -> bool:
    """Will `round_reminders` for this call ask whether a task is in progress? A caller
    whose answer costs a disk read (the server, off its event loop) asks it first."""
    after = ReminderClock(clock.plan_quiet, clock.todo_quiet)
    after.tick(plan_changed=_changes(tool, succeeded)[0], todo_changed=False)
    return after.plan_due()


def round_reminders(
    clock: ReminderClock,
    tool: str,
    *,
    succeeded: bool,
    plan_has_work: Callable[[], bool],
    todo_unfinished: bool = False,
) -> list[str]:
    """The reminder policy, the one composition of it: count one tool call on `clock` and
    return the reminders due on it (maybe none). The server (Session.round) and the
    Claude Code hook both call this. `plan_has_work` is asked only when a plan reminder
    is due (it may cost a read)."""
    plan_changed, todo_changed = _changes(tool, succeeded)
    clock.tick(plan_changed=plan_changed, todo_changed=todo_changed)
    due: list[str] = []
    if clock.plan_due() and plan_has_work():
        due.append(PLAN_REMINDER)
    if clock.todo_due() and todo_unfinished:
        due.append(TODO_REMINDER)
    return due


@dataclass
class Session:
    """What the server remembers about one client session."""

    current_plan: str | None = None
    todo: TodoList = field(default_factory=TodoList)
    clock: ReminderClock = field(default_factory=ReminderClock)
    # The tasks this session claimed and under which owner ("plan#id" -> owner), the latest
    # MAX_CLAIMS_KEPT: an update that names no owner is known by it, so a session whose
    # claim was taken over (its lease ran out) cannot undo the new owner's work unnamed.
    claims: dict[str, str] = field(default_factory=dict)

    def claimed_as(self, plan: str, task_id: int) -> str | None:
        """The owner this session claimed the task as, if it did."""
        return self.claims.get(f"{plan}#{task_id}")

    def known_as(self) -> str | None:
        """The owner this session claimed its latest task as: who its notes are by."""
        return next(reversed(self.claims.values()), None)

    def keep_claim(self, plan: str, task_id: int, owner: str | None) -> None:
        """Remember (an owner) or forget (None) this session's claim of a task."""
        key = f"{plan}#{task_id}"
        self.claims.pop(key, None)
        if owner:
            self.claims[key] = owner
            while len(self.claims) > MAX_CLAIMS_KEPT:
                del self.claims[next(iter(self.claims))]

    def round(self, tool: str, *, succeeded: bool, plan_has_work: Callable[[], bool]) -> list[str]:
        """Count one tool call of this session and return the reminders due on it."""
        return round_reminders(
            self.clock, tool, succeeded=succeeded, plan_has_work=plan_has_work, todo_unfinished=self.todo.unfinished
        )

    def plan_check_due(self, tool: str, *, succeeded: bool) -> bool:
        return plan_check_due(self.clock, tool, succeeded=succeeded)

    # A store shared by several servers keeps sessions as JSON (store.SharedSessions).

    def to_state(self) -> dict[str, Any]:
        return {
            "currentPlan": self.current_plan,
            "todo": [i.model_dump(by_alias=True) for i in self.todo.items],
            "topic": self.todo.topic,
            "planQuiet": self.clock.plan_quiet,
            "todoQuiet": self.clock.todo_quiet,
            "claims": self.claims,
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Session:
        """The session a stored state describes; what cannot be read starts afresh (a
        session is advisory bookkeeping: never worth failing a call)."""
        session = cls()
        current = state.get("currentPlan")
        session.current_plan = current if isinstance(current, str) else None
        try:
            session.todo.items = [TodoItem.model_validate(i) for i in state.get("todo") or []]
        except (ValidationError, TypeError):
            session.todo.items = []
        topic = state.get("topic")
        session.todo.topic = topic if isinstance(topic, str) else ""
        for attr, key in (("plan_quiet", "planQuiet"), ("todo_quiet", "todoQuiet")):
            value = state.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                setattr(session.clock, attr, value)
        claims = state.get("claims")
        if isinstance(claims, dict):
            kept = [(k, v) for k, v in claims.items() if isinstance(k, str) and isinstance(v, str)]
            session.claims = dict(kept[-MAX_CLAIMS_KEPT:])
        return session
