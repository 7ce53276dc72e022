"""The seed plan every suite starts from (the contract's example, 2026-05-28-add-auth:
2 of 4 done, #3 in progress under alice) and small plan factories."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Unpack

from planning_core import Planner
from planning_core.caller import NOBODY
from planning_core.queries import PageFilters, TaskPage, page_of, page_query
from planning_core.stores.files import FileStore

PLAN_DATE = "2026-05-28"
PLAN_NAME = f"{PLAN_DATE}-add-auth"
SUBJECTS = ["Design auth schema", "Implement JWT middleware", "Add login endpoint", "Add logout endpoint"]
DESCRIPTIONS = ["tables", "jwt", "POST /login", "POST /logout"]
ANALYSIS = "Users need to log in."
APPROACH = "JWT with a middleware."

# Each task's blockers, by position. DIAMOND is the contract's (1 -> 2, 1 -> 3, 2,3 -> 4:
# #4 waits on the in-progress #3). FORK has #2 -> #3 and #2 -> #4, so #4 is ready while #3
# is in progress: what the terminal views and hooks show as "next". CHAIN is a line.
DIAMOND: list[list[int]] = [[], [1], [1], [2, 3]]
FORK: list[list[int]] = [[], [1], [2], [2]]
CHAIN: list[list[int]] = [[], [1], [2], [3]]  # each task blocked by the one before

# What the seed looks like once #1 and #2 are done and #3 is in progress (any edges).
SEED_SUMMARY = "\n".join(
    [
        "[Session Plan] Active tasks:",
        f"  ▸ {PLAN_NAME} [2/4 done]",
        f"    [x] #1: {SUBJECTS[0]}",
        f"    [x] #2: {SUBJECTS[1]}",
        f"    [>] #3: {SUBJECTS[2]}",
        f"    [ ] #4: {SUBJECTS[3]}",
    ]
)
SEED_ACTIVE_LINE = f'- {PLAN_NAME} [2/4 done] current: "{SUBJECTS[2]}"'


def seed_tasks(blockers: Sequence[Sequence[int]] = DIAMOND) -> list[dict[str, Any]]:
    """The seed's four tasks as PlanCreate takes them."""
    tasks: list[dict[str, Any]] = []
    for subject, description, blocked_by in zip(SUBJECTS, DESCRIPTIONS, blockers, strict=True):
        task: dict[str, Any] = {"subject": subject, "description": description}
        if blocked_by:
            task["blockedBy"] = list(blocked_by)
        tasks.append(task)
    tasks[0]["activeForm"] = "Designing auth schema"
    return tasks


def plan_create_args(blockers: Sequence[Sequence[int]] = DIAMOND) -> dict[str, Any]:
    """The seed as PlanCreate's arguments (the tool's and Planner.create_plan's names agree)."""
    return {
        "title": "Add auth",
        "analysis": ANALYSIS,
        "approach": APPROACH,
        "date": PLAN_DATE,
        "tasks": seed_tasks(blockers),
    }


def seed_plan(
    planner: Planner, blockers: Sequence[Sequence[int]] = DIAMOND, *, in_progress: bool = True, by: str = NOBODY
) -> str:
    """Create the seed plan, finish #1 and #2, start #3 under alice (unless told not to);
    `by`: the writer the history names."""
    name = planner.create_plan(**plan_create_args(blockers), by=by).name
    assert name.startswith(PLAN_NAME), name  # the contract's name (-2 on a second seed)
    planner.update_task(name, 1, status="completed", by=by)
    planner.update_task(name, 2, status="completed", by=by)
    if in_progress:
        planner.update_task(name, 3, status="in_progress", owner="alice", by=by)
    return name


def seed_root(root: Path, blockers: Sequence[Sequence[int]] = DIAMOND, *, in_progress: bool = True) -> str:
    """The seed plan in a new (or existing) planning root."""
    return seed_plan(_planner(root), blockers, in_progress=in_progress)


def chain(n: int, prefix: str = "t") -> list[dict[str, Any]]:
    """n tasks, each blocked by the one before: t1 <- t2 <- ... <- tn."""
    return [
        {"subject": f"{prefix}{i}", "description": "", **({"blockedBy": [i - 1]} if i > 1 else {})}
        for i in range(1, n + 1)
    ]


def make_plan(
    root: Path,
    slug: str,
    tasks: Sequence[dict[str, Any]] = (),
    *,
    title: str | None = None,
    analysis: str = "",
    approach: str = "",
) -> Path:
    """A plan named PLAN_DATE-slug in `root` (created if need be); returns its folder."""
    name = (
        _planner(root)
        .create_plan(
            title or slug.capitalize(),
            analysis=analysis,
            approach=approach,
            name=slug,
            date=PLAN_DATE,
            tasks=list(tasks),
        )
        .name
    )
    return root / "todo" / name


def _planner(root: Path) -> Planner:
    store = FileStore(root)
    store.ensure_writable()
    return Planner(store)


def list_tasks(planner: Planner, plan: str, **filters: Unpack[PageFilters]) -> TaskPage:
    """A TaskList page as the tool reads it: its query checked first, then the plan's view
    at the planner's clock (Actions.task_list's one path, without the session)."""
    query = page_query(**filters)
    return page_of(planner.store.view(plan), query, planner.clock())
