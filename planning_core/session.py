"""Per-session state and the reminder policy (contract §4).

A round is one tool call answered for a session, refused calls included. The
call that changes the plan (or the todo list) is round 0; a reminder is due on
every PLAN_INTERVAL-th (TODO_INTERVAL-th) quiet round after it, and only while
there is work in progress.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .todo import TodoList

PLAN_REMINDER = (
    "<reminder>You have an active session plan. Check TaskList and update task status.</reminder>"
)
TODO_REMINDER = "<reminder>Your todo list has unfinished items. Update it with the todo tool.</reminder>"
PLAN_INTERVAL = 5
TODO_INTERVAL = 3

PLAN_CHANGING_TOOLS = frozenset({"PlanCreate", "TaskCreate", "TaskUpdate", "PlanArchive"})
TODO_TOOL = "todo"


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


@dataclass
class Session:
    """What the server remembers about one client session."""

    current_plan: str | None = None
    todo: TodoList = field(default_factory=TodoList)
    clock: ReminderClock = field(default_factory=ReminderClock)

    def round(self, tool: str, *, succeeded: bool, plan_has_work: Callable[[], bool]) -> list[str]:
        """Count one tool call and return the reminders due on it (maybe none).

        `plan_has_work` is asked only when a plan reminder is due (it may cost a read).
        """
        self.count_round(tool, succeeded=succeeded)
        return self.reminders_due(plan_has_work=self.clock.plan_due() and plan_has_work())

    def count_round(self, tool: str, *, succeeded: bool) -> None:
        self.clock.tick(
            plan_changed=succeeded and tool in PLAN_CHANGING_TOOLS,
            todo_changed=succeeded and tool == TODO_TOOL,
        )

    def plan_check_needed(self) -> bool:
        """Is a plan reminder due on this round, if there is work in progress?"""
        return self.clock.plan_due()

    def reminders_due(self, *, plan_has_work: bool) -> list[str]:
        due: list[str] = []
        if self.clock.plan_due() and plan_has_work:
            due.append(PLAN_REMINDER)
        if self.clock.todo_due() and self.todo.unfinished:
            due.append(TODO_REMINDER)
        return due
