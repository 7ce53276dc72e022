"""TaskList answers, made from what is kept between calls.

A store hands out a new Task object for every change and never changes one it handed
out, and its view of a plan (PlanStore.view) is one object per version of the plan. So:

- a task's row, the row's JSON and its board line are made once per task object (and
  its open blockers), however many pages show it;
- a whole page is kept per view of its plan: asked again while the plan has not changed
  (by this process, another one or a hand edit: the store's view notices each), it is the
  same answer, so it is given again without touching a row. A page that depends on the
  clock (a lease that may run out, `ready`) is made afresh every time.

Both are bounded; past the bound they are made afresh, never served stale.
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from .models import PlanSnapshot, Task
from .outcomes import TaskListed, TaskRow
from .queries import PageQuery, page_of
from .rendering import render
from .rendering.rows import task_row
from .taskgraph.ranking import READY_ORDER

NO_BLOCKERS: list[int] = []  # shared, never changed: most rows have no open blocker
MAX_KEPT_ROWS = 20_000  # rows kept (about 1 KB each with their JSON and line): then made afresh
MAX_KEPT_PLANS = 64  # plans whose last pages are kept
MAX_PAGES_PER_PLAN = 16  # distinct queries (status, owner, limit, start) kept per plan


@dataclass(frozen=True)
class Page:
    """One TaskList answer: the text, the data, and the data as sent."""

    text: str
    data: TaskListed
    wire: dict[str, Any]


class Pages:
    def __init__(self) -> None:
        # id(task) -> (task, open blockers, claimable, row, row as sent, line). Holding the
        # task keeps its id() from being reused by another object.
        self._rows: dict[int, tuple[Task, list[int], bool, TaskRow, dict[str, Any], str]] = {}
        self._pages: OrderedDict[str, tuple[PlanSnapshot, dict[PageQuery, Page]]] = OrderedDict()

    def page(self, snap: PlanSnapshot, query: PageQuery, now: dt.datetime) -> Page:
        """The page `query` asks for of the plan `snap` shows."""
        kept = self._pages.get(snap.name)
        if kept is None or kept[0] is not snap:  # the plan changed: its old pages are gone
            kept = self._pages[snap.name] = (snap, {})
            while len(self._pages) > MAX_KEPT_PLANS:
                self._pages.popitem(last=False)
        else:
            self._pages.move_to_end(snap.name)
        found = kept[1].get(query)
        if found is not None:
            return found
        made, timeless = self._make(snap, query, now)
        if timeless and len(kept[1]) < MAX_PAGES_PER_PLAN:
            kept[1][query] = made
        return made

    def _make(self, snap: PlanSnapshot, query: PageQuery, now: dt.datetime) -> tuple[Page, bool]:
        page = page_of(snap, query, now)
        claimable = set(page.claimable)  # claims whose lease ran out: another owner may take them
        blockers = page.open_blockers
        made = [self._row(t, blockers.get(t.id, NO_BLOCKERS), t.id in claimable) for t in page.tasks]
        text = render.task_board(
            page.plan,
            page.tasks,
            blockers,
            page.unreadable,
            page.next_cursor,
            [line for *_, line in made],
            order=f"ready, {READY_ORDER}" if query.status == "ready" else None,
        )
        data = TaskListed.model_construct(  # rows and summary already validated
            plan=page.plan, tasks=[row for row, _, _ in made], unreadable=page.unreadable, next_cursor=page.next_cursor
        )
        # The answer's JSON from the kept rows: only the page's frame is dumped afresh.
        wire = data.model_copy(update={"tasks": []}).model_dump(mode="json", by_alias=True, exclude_none=True)
        wire["tasks"] = [row for _, row, _ in made]
        # Only a lease (shown as claimable, and what `ready` lists) makes a page depend on the clock.
        timeless = query.status != "ready" and not any(t.lease_expires_at for t in page.tasks)
        return Page(text, data, wire), timeless

    def _row(self, t: Task, blockers: list[int], claimable: bool) -> tuple[TaskRow, dict[str, Any], str]:
        """The task's row, the row as sent, and its board line."""
        hit = self._rows.get(id(t))
        if hit is None or hit[0] is not t or hit[2] is not claimable or hit[1] != blockers:
            if len(self._rows) >= MAX_KEPT_ROWS:
                self._rows.clear()
            row = task_row(t, blockers, claimable)
            wire = row.model_dump(mode="json", by_alias=True, exclude_none=True)
            hit = self._rows[id(t)] = (t, blockers, claimable, row, wire, render.task_line(t, blockers, claimable))
        return hit[3], hit[4], hit[5]
