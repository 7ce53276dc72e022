"""Reading a plan: the filtered, paged task board."""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
from collections.abc import Iterable, Mapping
from typing import NamedTuple, TypedDict, Unpack

from pydantic import BaseModel, Field

from .errors import CurrentPlanGone, InvalidInput, NoCurrentPlan, PlanNotFound
from .models import LIST_STATUSES, STATUS_NAMES, CorruptFile, PlanSnapshot, PlanSummary, Task, TaskStatus
from .names import match_plan, parse_task_id
from .store import PlanStore
from .taskgraph import graph, ranking

DEFAULT_PAGE = 200
MAX_PAGE = 1_000


class TaskPage(BaseModel):
    plan: PlanSummary
    tasks: list[Task]
    unreadable: list[CorruptFile]
    next_cursor: str | None = None
    open_blockers: dict[int, list[int]] = Field(default_factory=dict, description="page tasks with open blockers")
    claimable: list[int] = Field(default_factory=list, description="page tasks in progress whose lease ran out")


def resolve_plan(store: PlanStore, plan: str | None, current: str | None = None) -> str:
    """The plan a call works on: `plan` (a full name or a unique part: names.match_plan),
    else the session's current plan, else the only active plan. A current plan that has
    left todo/ is refused (CurrentPlanGone), never replaced by another one silently."""
    if plan is not None and plan != "":
        name = match_plan(plan, store.active_plans, store.archived_plans)
        store.is_archived(name)  # raises PlanNotFound
        return name
    active = store.active_plans()
    if current:
        if current in active:
            return current
        try:
            archived = store.is_archived(current)
        except PlanNotFound:
            archived = False
        raise CurrentPlanGone(current, archived, active)
    if len(active) == 1:
        return active[0]
    raise NoCurrentPlan(active)


class PageQuery(NamedTuple):
    """A TaskList query, checked: the page's size and the id it starts after."""

    status: str | None
    owner: str | None
    limit: int
    after: int
    label: str | None = None
    parent: int | None = None

    def filtered(self) -> bool:
        """Does it leave tasks out (else it is the whole board, page by page)?"""
        return not (self.status is None and self.owner is None and self.label is None and self.parent is None)


class PageFilters(TypedDict, total=False):
    """TaskList's arguments besides the plan, as a caller names them (each may be left out)."""

    status: str | None
    owner: str | None
    limit: int | None
    cursor: str | None
    label: str | None
    parent: object


def page_query(**filters: Unpack[PageFilters]) -> PageQuery:
    """The query TaskList's arguments ask; InvalidInput for one no page answers."""
    status, limit, cursor, parent = (
        filters.get("status"),
        filters.get("limit"),
        filters.get("cursor"),
        filters.get("parent"),
    )
    if status is not None and status not in LIST_STATUSES:
        raise InvalidInput(f"status {status!r} is not one of {', '.join(LIST_STATUSES)}.")
    if limit is None:
        limit = DEFAULT_PAGE
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be a whole number from 1 to {MAX_PAGE}.")
    after = 0
    if cursor:
        try:
            after = parse_task_id(cursor)
        except InvalidInput:
            raise InvalidInput(
                f"cursor {cursor!r} is not one this server gave; leave it out to start from the top."
            ) from None
    return PageQuery(
        status,
        filters.get("owner"),
        limit,
        after,
        filters.get("label"),
        None if parent is None else parse_task_id(parent),
    )


def _matches(t: Task, query: PageQuery, statuses: Mapping[int, TaskStatus], at: dt.datetime) -> bool:
    status = query.status
    if status == "ready" and not graph.is_ready(t, statuses, at):
        return False
    if status == "blocked" and not graph.is_blocked(t, statuses):
        return False
    if status in STATUS_NAMES and t.status.value != status:
        return False
    if query.owner is not None and t.owner != query.owner:
        return False
    return ranking.Pick(query.label, query.parent).matches(t)


def _following(snap: PlanSnapshot, query: PageQuery, at: dt.datetime) -> Iterable[Task]:
    """The tasks after the cursor, in id order, taken only as far as the page needs: a page
    of a big plan costs its own rows, not the plan's (the first page copies no id list).
    `ready` is in the claim's order instead (ranking.py), its cursor a place in that order."""
    after = query.after
    if query.status == "ready":
        return ranking.ready_in_order(snap, at, after)
    if after:
        ids = list(snap.tasks)
        return (snap.tasks[i] for i in ids[bisect.bisect_right(ids, after) :])
    return snap.tasks.values()


def _rows(snap: PlanSnapshot, query: PageQuery, statuses: Mapping[int, TaskStatus], at: dt.datetime) -> list[Task]:
    """The page's tasks and one more (which tells whether there is a next page)."""
    following = _following(snap, query, at)
    if not query.filtered():
        return list(itertools.islice(following, query.limit + 1))
    rows = []
    for t in following:
        if _matches(t, query, statuses, at):
            rows.append(t)
            if len(rows) > query.limit:
                break
    return rows


def _unreadable(snap: PlanSnapshot, query: PageQuery, upto: int | None) -> list[CorruptFile]:
    """The unreadable files of the page's range (each reported on one page only)."""
    if query.filtered():
        return []
    after = query.after
    return [c for c in snap.corrupt if (not after or c.task_id > after) and (upto is None or c.task_id <= upto)]


def _open_blockers(page: list[Task], statuses: Mapping[int, TaskStatus]) -> dict[int, list[int]]:
    open_blockers: dict[int, list[int]] = {}
    for t in page:
        if t.blocked_by and t.status is not TaskStatus.COMPLETED:
            found = [b for b in t.blocked_by if graph.blocker_open(b, statuses)]
            if found:
                open_blockers[t.id] = found
    return open_blockers


def page_of(snap: PlanSnapshot, query: PageQuery, now: dt.datetime | None = None) -> TaskPage:
    """One page of the board of `snap` (a view: nothing here changes a task)."""
    at = now or graph.utc_now()
    statuses = graph.plan_statuses(snap)
    rows = _rows(snap, query, statuses, at)
    page, rest = rows[: query.limit], rows[query.limit :]
    upto = page[-1].id if rest else None
    return TaskPage.model_construct(  # from tasks and a summary already validated
        plan=snap.summary(),
        tasks=page,
        unreadable=_unreadable(snap, query, upto),
        next_cursor=str(page[-1].id) if rest else None,
        open_blockers=_open_blockers(page, statuses),
        claimable=[t.id for t in page if t.lease_expires_at and graph.lease_expired(t, at)],
    )
