"""Per-session state: the current plan, the todo list, the claims, and the reminder clock
(the policy is planning_core/reminders.py's, which the Claude Code hook uses alone)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .models import TodoItem
from .reminders import (
    PLAN_CHANGING_TOOLS,
    PLAN_INTERVAL,
    PLAN_REMINDER,
    TODO_INTERVAL,
    TODO_REMINDER,
    TODO_TOOL,
    ReminderClock,
    plan_check_due,
    round_reminders,
)
from .todo import TodoList

__all__ = [
    "PLAN_CHANGING_TOOLS",
    "PLAN_INTERVAL",
    "PLAN_REMINDER",
    "TODO_INTERVAL",
    "TODO_REMINDER",
    "TODO_TOOL",
    "ReminderClock",
    "Session",
    "plan_check_due",
    "round_reminders",
]

MAX_CLAIMS_KEPT = 32  # the session's latest claims it is known by (Session.claims)


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
