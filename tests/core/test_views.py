"""A plan's view moved on by what changed (planning_core/stores/views.py) is exactly the
view derived in full: the same tasks in the same order, the same derived `blocks` and
repairs, the same summary, after any sequence of changes a store can hand it (tasks
added, edited, re-linked, removed, unreadable files coming and going, stale or
self-referencing links as a hand edit leaves them)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from planning_core.models import CorruptFile, Task, TaskStatus
from planning_core.stores.views import PlanView, full_view

IDS = st.integers(min_value=1, max_value=12)
STATUSES = st.sampled_from(list(TaskStatus))


def task(task_id: int, status: TaskStatus, blocked_by: list[int], blocks: list[int], subject: str) -> Task:
    return Task(id=task_id, subject=subject, status=status, blocked_by=blocked_by, blocks=blocks)


TASKS = st.builds(
    task,
    IDS,
    STATUSES,
    st.lists(IDS, max_size=3, unique=True),
    st.lists(IDS, max_size=2, unique=True),
    st.sampled_from(["a", "b", "c"]),
)
# One change: put a task (new or edited; ids are random, so some land below the highest),
# remove one, or mark one unreadable / readable again.
CHANGES = st.one_of(
    st.tuples(st.just("put"), TASKS),
    st.tuples(st.just("remove"), IDS),
    st.tuples(st.just("corrupt"), IDS),
    st.tuples(st.just("heal"), IDS),
)


def as_data(tasks: dict[int, Task]) -> list[dict[str, Any]]:
    return [t.model_dump() for t in tasks.values()]


@settings(max_examples=300, deadline=None)
@given(st.lists(TASKS, max_size=8), st.lists(st.lists(CHANGES, min_size=1, max_size=3), max_size=8))
def test_a_view_moved_on_by_changes_is_the_view_derived_in_full(
    first: list[Task], rounds: list[list[tuple[str, Any]]]
) -> None:
    source: dict[int, Task] = {t.id: t for t in first}
    corrupt: dict[int, CorruptFile] = {}
    view = PlanView()
    for changes in [[], *rounds]:
        source = dict(source)  # a store hands in a new dict per version, never changes the old one
        for kind, value in changes:
            if kind == "put":
                source[value.id] = value
            elif kind == "remove":
                source.pop(value, None)
            elif kind == "corrupt":
                corrupt[value] = CorruptFile(task_id=value, file=f"task_{value}.json", reason="bad JSON")
                source.pop(value, None)  # an unreadable file is not a task
            else:
                corrupt.pop(value, None)
        unreadable = sorted(corrupt.values(), key=lambda c: c.task_id)
        before = {i: t.model_dump() for i, t in source.items()}
        snap = view.view("p", "Plan", False, source, unreadable)
        tasks, summary = full_view("p", "Plan", False, source, unreadable)
        assert list(snap.tasks) == list(tasks)  # id order
        assert as_data(snap.tasks) == as_data(tasks)
        assert snap.summary() == summary
        assert {i: t.model_dump() for i, t in source.items()} == before  # the store's tasks are never changed
