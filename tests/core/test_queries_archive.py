"""TaskList filters and paging, progress and `current`; PlanArchive."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from planning_core import (
    InvalidInput,
    NoCurrentPlan,
    PlanArchived,
    Planner,
    PlanNotFinished,
    PlanNotFound,
    Progress,
)
from planning_core.store import PlanStore
from planning_core.stores.files import FileStore
from tests.support.seed import list_tasks, seed_plan
from tests.support.stores import stored_plan, stored_state, stored_tasks


@pytest.fixture
def mixed(planner: Planner) -> str:
    """#1 done; #2 in progress (ann); #3 pending, ready; #4 blocked by #2;
    #5 blocked by #1 only (ready); #6 in progress (bob); #7 pending, blocked by #4."""
    snap = planner.create_plan(
        "Mixed", date="2026-05-28",
        tasks=[{"subject": "one"}, {"subject": "two"}, {"subject": "three"}, {"subject": "four", "blockedBy": [2]},
               {"subject": "five", "blockedBy": [1]}, {"subject": "six"}, {"subject": "seven", "blockedBy": [4]}],
    )  # fmt: skip
    n = snap.name
    planner.update_task(n, 1, status="completed", owner="ann")
    planner.update_task(n, 6, status="in_progress", owner="bob")
    planner.update_task(n, 2, status="in_progress", owner="ann")
    return n


@pytest.mark.parametrize(
    ("kwargs", "ids"),
    [
        ({}, [1, 2, 3, 4, 5, 6, 7]),
        ({"status": "pending"}, [3, 4, 5, 7]),
        ({"status": "in_progress"}, [2, 6]),
        ({"status": "completed"}, [1]),
        ({"status": "ready"}, [3, 5]),
        ({"status": "blocked"}, [4, 7]),
        ({"owner": "ann"}, [1, 2]),
        ({"owner": "bob", "status": "in_progress"}, [6]),
        ({"owner": "nobody"}, []),
    ],
)
def test_list_filters(planner: Planner, mixed: str, kwargs: dict[str, str], ids: list[int]) -> None:
    assert [t.id for t in list_tasks(planner, mixed, **kwargs).tasks] == ids  # type: ignore[arg-type]


def test_open_blockers_only(planner: Planner, mixed: str) -> None:
    page = list_tasks(planner, mixed)
    assert page.open_blockers[4] == [2]
    assert 5 not in page.open_blockers  # its only blocker, #1, is completed
    assert 1 not in page.open_blockers


def test_progress_and_current(planner: Planner, mixed: str) -> None:
    snap = planner.store.snapshot(mixed)
    assert snap.progress() == Progress(total=7, completed=1, in_progress=2, pending=4)
    summary = snap.summary()
    assert (summary.current_id, summary.current) == (2, "two")  # lowest-numbered in_progress, not first started
    assert list_tasks(planner, mixed).plan.progress.completed == 1


def test_paging_through_450_tasks(planner: Planner, file_store: FileStore) -> None:
    snap = planner.create_plan("Big", date="2026-05-28", tasks=[{"subject": f"task {i}"} for i in range(1, 451)])
    name = snap.name
    for broken in (5, 300):
        (file_store.todo / name / f"task_{broken}.json").write_text("{")
    for limit in (100, 200, 450, 1000):
        seen: list[int] = []
        unreadable: list[int] = []
        cursor = None
        pages = 0
        while True:
            page = list_tasks(planner, name, limit=limit, cursor=cursor)
            pages += 1
            assert len(page.tasks) <= limit
            seen += [t.id for t in page.tasks]
            unreadable += [c.task_id for c in page.unreadable]
            cursor = page.next_cursor
            if cursor is None:
                break
        assert seen == [i for i in range(1, 451) if i not in (5, 300)]
        assert unreadable == [5, 300]  # each reported exactly once
        assert pages == -(-448 // limit)
    assert len(list_tasks(planner, name).tasks) == 200  # default page
    ready = list_tasks(planner, name, status="ready", limit=1000)
    assert len(ready.tasks) == 448 and ready.next_cursor is None


@pytest.mark.parametrize("limit", [0, -1, 1001, True, "10", 2.5])
def test_bad_limit(planner: Planner, mixed: str, limit: object) -> None:
    with pytest.raises(InvalidInput):
        list_tasks(planner, mixed, limit=limit)  # type: ignore[arg-type]


def test_bad_cursor(planner: Planner, mixed: str) -> None:
    with pytest.raises(InvalidInput):
        list_tasks(planner, mixed, cursor="../etc")


def test_resolve_current_plan(planner: Planner) -> None:
    with pytest.raises(NoCurrentPlan, match="PlanCreate"):
        planner.resolve(None)
    a = planner.create_plan("Alpha", date="2026-05-28").name
    assert planner.resolve(None) == a  # the only active plan
    b = planner.create_plan("Beta", date="2026-05-28").name
    with pytest.raises(NoCurrentPlan) as info:
        planner.resolve(None)
    assert a in str(info.value) and b in str(info.value)
    assert planner.resolve(None, current=b) == b
    assert planner.resolve(a, current=b) == a
    with pytest.raises(PlanNotFound):
        planner.resolve("2026-05-28-nope")


def test_archive_refuses_unfinished_then_forces(planner: Planner, store: PlanStore) -> None:
    name = seed_plan(planner)
    before = stored_state(store)
    with pytest.raises(PlanNotFinished) as info:
        planner.archive(name)
    assert "#3" in str(info.value) and "#4" in str(info.value) and "force" in str(info.value)
    assert stored_state(store) == before
    stored = stored_plan(store, name)

    snap = planner.archive(name, force=True)
    assert snap.archived
    assert store.active_plans() == [] and store.archived_plans() == [name] and store.is_archived(name)
    assert stored_plan(store, name) == stored  # archiving changes no task, plan.md or mark
    after = stored_state(store)
    # archived plans are read-only but readable
    writes: list[Callable[[], object]] = [
        lambda: planner.create_task(name, "more"),
        lambda: planner.update_task(name, 4, status="completed"),
        lambda: planner.update_task(name, 4, status="deleted"),
        lambda: planner.archive(name, force=True),
    ]
    if isinstance(store, FileStore):
        writes.append(lambda: store.repair(name))
    for write in writes:
        with pytest.raises(PlanArchived):
            write()
    assert stored_state(store) == after
    assert planner.get_task(name, 3).subject == "Add login endpoint"
    assert store.snapshot(name).progress().completed == 2
    assert [s.name for s in planner.summaries()] == []
    assert [s.name for s in planner.summaries(include_done=True)] == [name]


def test_archive_finished_plan_without_force(planner: Planner, store: PlanStore) -> None:
    name = seed_plan(planner)
    planner.update_task(name, 3, status="completed")
    assert planner.update_task(name, 4, status="completed").all_done
    planner.archive(name)
    assert store.archived_plans() == [name]
    assert sorted(stored_tasks(store, name)) == [1, 2, 3, 4]  # the layout of done/: test_files_on_disk
