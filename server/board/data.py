"""The board's data, built from the core for every view of a board: the CLI's
`board --json` and `status --json` (plan_data), the browser's JSON and events and the
MCP App's tool (board_data). Each task is the core's board row (rows.board_row); the
column of each task is the core's rule (graph.is_ready, graph.is_blocked over the
plan's statuses), never recomputed in the page."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from planning_core import PlanningError, PlanSnapshot, TaskStatus
from planning_core.actions import Actions
from planning_core.models import PlanSummary
from planning_core.names import PLAN_DATE_LENGTH
from planning_core.rendering import timeline
from planning_core.rendering.rows import board_row
from planning_core.taskgraph import graph

# Left to right as a person reads a board: what can start, what waits, what runs, what is done.
COLUMNS = ("ready", "blocked", "in_progress", "done")
COLUMN_TITLES = {"ready": "Ready", "blocked": "Blocked", "in_progress": "In progress", "done": "Done"}
TIMELINE_EVENTS = 12  # the plan's latest events beside its board


def plan_timeline(actions: Actions, name: str) -> list[dict[str, str]]:
    """The plan's latest events, newest first, as the log command prints them."""
    items, _ = actions.history_page(name, TIMELINE_EVENTS, None)
    return [{"at": i.at, "text": timeline.line(i)} for i in items]


def select_plans(actions: Actions, wanted: str | None) -> list[str]:
    """No name: every active plan. A name or a unique part of one: that plan, by the rule
    the tools' `plan` argument follows (Actions.resolve: names.match_plan)."""
    return [actions.resolve(wanted, None)] if wanted else actions.active_plans()


# What `status --json` shows of each task: the board row's first fields.
STATUS_FIELDS = ("id", "subject", "status")


def plan_data(snap: PlanSnapshot, *, detail: bool) -> dict[str, Any]:
    """One plan as `board --json` (detail) or `status --json` shows it."""
    data: dict[str, Any] = snap.summary().model_dump(mode="json", by_alias=True)
    blockers = graph.open_blockers_by_task(snap)
    rows = [board_row(t, blockers.get(t.id, [])) for t in sorted(snap.tasks.values(), key=lambda t: t.id)]
    data["tasks"] = rows if detail else [{k: row[k] for k in STATUS_FIELDS} for row in rows]
    data["unreadableFiles"] = [c.model_dump(mode="json", by_alias=True) for c in snap.corrupt]
    return data


def column_of(snap: PlanSnapshot, statuses: Mapping[int, TaskStatus], task_id: int) -> str:
    task = snap.tasks[task_id]
    if task.status is TaskStatus.COMPLETED:
        return "done"
    if task.status is TaskStatus.IN_PROGRESS and not graph.lease_expired(task, graph.utc_now()):
        return "in_progress"  # its open blockers (if any) show on its card
    # Pending, or a claim whose lease ran out (claimable): the same rule as TaskList's ready.
    return "ready" if graph.is_ready(task, statuses) else "blocked"


def plan_board(snap: PlanSnapshot, location: str = "") -> dict[str, Any]:
    """One plan: the `board --json` fields, plus each task's column and description."""
    data = plan_data(snap, detail=True)
    statuses = graph.plan_statuses(snap)
    for row in data["tasks"]:
        row["column"] = column_of(snap, statuses, row["id"])
        row["description"] = snap.tasks[row["id"]].description
    for bad in data["unreadableFiles"]:
        bad["path"] = f"{location}/{bad['file']}" if location else bad["file"]
    return data


def _opening(plans: list[PlanSummary]) -> list[str]:
    """The plan a board shows when none is asked for: the newest with work left (names
    begin with their date; of one day's, the first), else the newest; none without plans."""
    unfinished = [p for p in plans if not p.progress.finished]
    newest = max(unfinished or plans, key=lambda p: p.name[:PLAN_DATE_LENGTH], default=None)
    return [] if newest is None else [newest.name]


def board_data(reads: Actions, wanted: str | None = None, *, actions: bool = False) -> dict[str, Any]:
    """The active plans beside one plan's board: `wanted` (a name or a unique part of one,
    by the tools' rule), else the newest active plan with work left (_opening). A plan that cannot be shown is an
    `error` the page prints, with the plans still listed."""
    return shown_board(reads, wanted, actions=actions)[0]


def shown_board(
    reads: Actions, wanted: str | None = None, *, actions: bool = False
) -> tuple[dict[str, Any], dt.datetime | None]:
    """board_data, and when it next changes with no write (the first lease on it to run
    out, moving its task from In progress to Ready), if ever. `reads`: the core the board
    reads through; `actions`: whether the page offers its buttons."""
    summaries = reads.summaries()
    plans = [p.model_dump(mode="json", by_alias=True) for p in summaries]
    out: dict[str, Any] = {"root": reads.describe(), "actions": actions, "plans": plans, "plan": None}
    out["columns"] = [{"key": k, "title": COLUMN_TITLES[k]} for k in COLUMNS]
    lapse = None
    try:
        names = select_plans(reads, wanted) if wanted else _opening(summaries)
        if names:
            snap = reads.snapshot(names[0])
            out["plan"] = plan_board(snap, reads.location(names[0]))
            out["plan"]["timeline"] = plan_timeline(reads, names[0])
            now = graph.utc_now()
            lapse = min((t for t in map(graph.lease_runs_out, snap.tasks.values()) if t and t > now), default=None)
    except PlanningError as e:  # no such plan, an ambiguous part of a name, an unreadable folder
        out["error"] = str(e)
    return out, lapse
