"""The history as people read it: a task's last events (TaskGet), a page of a plan's log
(`planning-mcp log`, the board), and "since you were last here" (the resume prompt, the
Claude Code SessionStart hook). Read through the seam's optional History ability: a store
without it shows nothing, and a history that cannot be read never fails the answer it
decorates (the tasks are the truth; the log is their story)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ..errors import PlanningError
from ..history import PAGE_MAX, SINCE_LINES, TASK_EVENTS_SHOWN, Logged, event_line, since_summary, since_time
from ..safetext import escape
from ..store import History, PlanStore

log = logging.getLogger(__name__)

HISTORY_HEADING = "History (latest first):"
MAX_SINCE_EVENTS = 2000  # events read for a "since" summary: the summary stays bounded
EventsSince = Callable[[str, int], list[Logged]]  # (start, limit) -> events, newest first


def line(item: Logged, *, with_plan: bool = False) -> str:
    return escape(event_line(item, with_plan=with_plan))


def task_history(store: PlanStore, name: str, task_id: int) -> str:
    """TaskGet's last lines: the task's latest events, or "" (no history kept or readable)."""
    if not isinstance(store, History):
        return ""
    try:
        items = store.task_events(name, task_id, TASK_EVENTS_SHOWN)
    except (PlanningError, OSError) as e:
        log.warning("history of %s #%s not read: %s", name, task_id, e)
        return ""
    return "\n".join([HISTORY_HEADING, *(f"- {line(i)}" for i in items)]) if items else ""


def log_page(store: PlanStore, name: str, limit: int, cursor: str | None) -> tuple[list[Logged], str | None]:
    """A page of the plan's events, newest first. Raises PlanningError (unknown plan, bad
    cursor) and StorageError as the store does; a store without history has none."""
    if not isinstance(store, History):
        return [], None
    return store.plan_events(name, max(1, min(limit, PAGE_MAX)), cursor)


def since_text(store: PlanStore, last_seen: float | None, now: float | None = None) -> str:
    """ "Since you were last here" (or in the last 24 hours): tasks completed, claimed,
    reopened and added, by whom, at most SINCE_LINES named; "" when nothing happened."""
    if not isinstance(store, History):
        return ""
    return since_read(store.events_since, last_seen, now)


def since_read(events_since: EventsSince, last_seen: float | None, now: float | None = None) -> str:
    """since_text from a read of the events (History.events_since, or a file store's logs
    read without the store opened, as the Claude Code hook does)."""
    start = since_time(last_seen, time.time() if now is None else now)
    try:
        items = events_since(start, MAX_SINCE_EVENTS)
    except (PlanningError, OSError) as e:
        log.warning("history since %s not read: %s", start, e)
        return ""
    return escape(since_summary(items, start, limit=SINCE_LINES), multiline=True)
