"""Gates: a task no agent does or completes. `gate: "human"` completes when a person
approves it (`planning-mcp approve PLAN ID`, the web board's Approve button, or the
client's form where the server can ask); `gate: {"after": <ISO time>}` completes once the
time has passed (the next claim, the Stop hook and `status --check-done` complete it).
Tasks blocked by a gated task wait for it like for any other blocker.

The rules, once: what a gate may be (check_gate), whether it still holds (holds), and
how the work waiting for one is named (waiting_line), for TaskUpdate's refusal, the
next claim's "nothing ready", TaskList, the Stop hook and `status --check-done`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from . import safetext, times
from .errors import InvalidInput

HUMAN = "human"  # gate: a person approves the task
AFTER = "after"  # gate: {"after": time}: the task completes once the time has passed
CLEAR_GATE = ""  # TaskUpdate's gate that removes it (null means "not sent")
APPROVE_COMMAND = "planning-mcp approve"
MAX_NAMED = 5  # gated tasks one line names; the rest are counted

Gate = str | dict[str, str]


def _time(text: str) -> dt.datetime | None:
    return times.parse_utc(text)  # past what UTC holds: its last moment ("never")


def _stamp(moment: dt.datetime) -> str:
    return times.stamp(moment)


def check_gate(value: Any, field: str) -> Gate | None:
    """ "human", or {"after": an ISO time} (kept in UTC, like createdAt); CLEAR_GATE (or
    nothing) for none."""
    if value is None or value == CLEAR_GATE:
        return None
    if value == HUMAN:
        return HUMAN
    if isinstance(value, dict) and list(value) == [AFTER] and isinstance(value[AFTER], str):
        moment = _time(value[AFTER])
        if moment is not None:
            return {AFTER: _stamp(moment)}
    shown = safetext.escape(str(value))[:80]
    raise InvalidInput(
        f'{field} must be "{HUMAN}" (a person approves it) or {{"{AFTER}": "<ISO time, e.g. '
        f'2026-12-24T09:00:00Z>"}}, or "{CLEAR_GATE}" to remove it; got {shown!r}. Nothing was changed.'
    )


def after_of(gate: Any) -> dt.datetime | None:
    """The time of a time gate (None for any other gate)."""
    if isinstance(gate, dict) and isinstance(gate.get(AFTER), str):
        return _time(gate[AFTER])
    return None


def is_gated(task: Any) -> bool:
    """An unfinished task with a gate: no agent starts or completes it."""
    return task.gate is not None and task.status.value != "completed"


def holds(task: Any, now: dt.datetime) -> bool:
    """Is the task still waiting for its gate (a person, or a time not yet passed)?"""
    if not is_gated(task):
        return False
    until = after_of(task.gate)
    return until is None or until > now


def time_passed(task: Any, now: dt.datetime) -> bool:
    """A time gate whose time has passed on an unfinished task: it completes now."""
    until = after_of(task.gate) if is_gated(task) else None
    return until is not None and until <= now


def passed_time_gates(tasks: Iterable[Any], now: dt.datetime) -> list[int]:
    """The ids of the tasks whose time gate has passed (time_passed), looking further only
    at those with a gate: each claim asks this of every task of the plan."""
    return [t.id for t in tasks if t.gate is not None and time_passed(t, now)]


def approve_command(plan: str, task_id: int) -> str:
    return f"{APPROVE_COMMAND} {plan} {task_id}"


def who_completes(plan: str, task: Any) -> str:
    """Who completes a gated task, for the refusal of an agent's attempt."""
    until = after_of(task.gate)
    command = approve_command(plan, task.id)
    if until is not None:
        return f"it completes by itself at {_stamp(until)}, or a person approves it early: {command}"
    return f"a person completes it: {command}, or the Approve button on the web board"


def waiting_line(plan: str, tasks: Iterable[Any]) -> str:
    """`waiting for a person: #5 Approve the schema (planning-mcp approve PLAN 5)`, then
    the tasks waiting for a time; "" when none is given."""
    people, times = [], []
    for t in tasks:
        until = after_of(t.gate)
        if until is None:
            people.append(f"#{t.id} {safetext.escape(t.subject)} ({approve_command(plan, t.id)})")
        else:
            times.append(f"#{t.id} {safetext.escape(t.subject)} (at {_stamp(until)})")
    parts = []
    if people:
        parts.append("waiting for a person: " + _some(people))
    if times:
        parts.append("waiting for a time: " + _some(times))
    return "; ".join(parts)


def _some(items: list[str]) -> str:
    shown = ", ".join(items[:MAX_NAMED])
    return shown + (f" and {len(items) - MAX_NAMED:,} more" if len(items) > MAX_NAMED else "")


def describe(gate: Any) -> str:
    """`a person` or `after <time>`."""
    until = after_of(gate)
    return f"after {_stamp(until)}" if until is not None else "a person"


def mark(gate: Any) -> str:
    """How a task line shows its gate: ` [gate: a person]`, ` [gate: after <time>]`."""
    return f" [gate: {describe(gate)}]"
