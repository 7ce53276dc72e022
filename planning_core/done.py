"""Is a plan done, and if not, what is left and who can do it: the one judgement behind
`planning-mcp status --check-done` and Claude Code's Stop hook (server/claude_code/stop.py).

In this order: a task the asking agent holds in progress (`mine`: its owner names, "" for
a task nobody owns), then the best ready task nobody holds (ranking.py's order), then
work held by other agents, then work waiting for a gate (gates.py: a person, a time),
then what only a hand can fix (unreadable tasks, a cycle of links)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import gates, verify
from .safetext import escape
from .taskgraph import ranking
from .taskjson import TaskStatus

if TYPE_CHECKING:  # the models' types only: a plan read plainly is judged without them
    from .models import PlanSnapshot, Task

DONE = "done"
YOURS = "yours"  # a task the asking agent holds in progress
READY = "ready"  # a task nobody holds that can start now
OTHERS = "others"  # work held by other agents
GATED = "gated"  # work that waits for a person or a time
STUCK = "stuck"  # unreadable tasks or a cycle: a hand must fix them
MAX_NAMED = 5


@dataclass(frozen=True)
class WorkLeft:
    plan: str
    kind: str
    line: str  # one line saying what is left and the next step

    @property
    def done(self) -> bool:
        return self.kind == DONE

    @property
    def doable(self) -> bool:
        """Work the asking agent can do now."""
        return self.kind in (YOURS, READY)


def _task(t: Task) -> str:
    return f"#{t.id} {escape(t.subject)}"


def work_left(snap: PlanSnapshot, now: dt.datetime, mine: Collection[str] = ()) -> WorkLeft:
    """What is left in `snap` (a view, never changed) for an agent whose owner names are
    `mine` ("" among them: a task in progress with no owner is the agent's own); with none,
    every task in progress is another agent's (a script asking)."""
    left = [t for t in snap.tasks.values() if t.status is not TaskStatus.COMPLETED]
    if not left and not snap.corrupt:
        return WorkLeft(snap.name, DONE, f"Plan {snap.name} is done: all {len(snap.tasks):,} tasks are completed.")
    total = len(snap.tasks) + len(snap.corrupt)
    count = f"Plan {snap.name} is not done ({len(left) + len(snap.corrupt):,} of {total:,} tasks left)"
    running = sorted((t for t in left if t.status is TaskStatus.IN_PROGRESS and t.gate is None), key=lambda t: t.id)
    return _doable(snap, count, running, now, mine) or _waiting(snap, count, left, running, now)


def _doable(
    snap: PlanSnapshot, count: str, running: list[Task], now: dt.datetime, mine: Collection[str]
) -> WorkLeft | None:
    """The agent's own task in progress, else the best ready task nobody holds."""
    held = [t for t in running if t.owner in mine]
    if held:
        t = held[0]
        whose = f" ({escape(t.owner)})" if t.owner else ""
        if verify.is_running(t.verification, now):
            step = f"Its checks are running: TaskGet #{t.id} shortly for the result (completed, or a failure to fix)."
        else:
            step = f"Finish it, then TaskUpdate #{t.id} status completed."
        return WorkLeft(snap.name, YOURS, f"{count}: {_task(t)} is in progress{whose}. {step}")
    ready = ranking.ready_in_order(snap, now)
    if not ready:
        return None
    return WorkLeft(
        snap.name,
        READY,
        f'{count}: {_task(ready[0])} is ready and nobody holds it. Next: TaskUpdate taskId "next" '
        'status "in_progress" with your owner name, then do it.',
    )


def _waiting(snap: PlanSnapshot, count: str, left: list[Task], running: list[Task], now: dt.datetime) -> WorkLeft:
    """What the work left waits for: other agents, a gate, or a hand."""
    if running:
        named = ", ".join(f"{_task(t)} ({escape(t.owner)})" for t in running[:MAX_NAMED])
        more = f" and {len(running) - MAX_NAMED:,} more" if len(running) > MAX_NAMED else ""
        return WorkLeft(snap.name, OTHERS, f"{count}: the rest waits for work held by other agents: {named}{more}.")
    gated = sorted((t for t in left if t.gate is not None), key=lambda t: t.id)
    if gated:
        return WorkLeft(snap.name, GATED, f"{count}: {gates.waiting_line(snap.name, gated)}.")
    return WorkLeft(snap.name, STUCK, f"{count}: {ranking.nothing_ready(snap, now)}")
