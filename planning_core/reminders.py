"""The reminder policy (after 5 quiet rounds for a plan, 3 for the todo list), apart from
the session's state so that the Claude Code hook counts a round without loading the models.

A round is one tool call answered for a session, refused calls included. The
call that changes the plan (or the todo list) is round 0; a reminder is due on
every PLAN_INTERVAL-th (TODO_INTERVAL-th) quiet round after it, and only while
there is work in progress.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

PLAN_REMINDER = "<reminder>You have an active session plan. Check TaskList and update task status.</reminder>"
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


def _changes(tool: str, succeeded: bool) -> tuple[bool, bool]:
    """(plan changed, todo changed) by one call: a refused call changed nothing."""
    return succeeded and tool in PLAN_CHANGING_TOOLS, succeeded and tool == TODO_TOOL


def reminded_plans(active: list[str], current: str | None) -> list[str]:
    """The plans whose work in progress makes a plan reminder due: the session's current
    plan while it is active, else (before there is one) every active plan."""
    return [current] if current and current in active else active


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
