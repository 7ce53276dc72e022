"""The plans' history, on every store: each kind of change is recorded with who made it and
what changed; a refused change records nothing; the log pages newest first; a task's last
events, "since you were last here" and the history survive a restart and a copy."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from planning_core import Planner, history
from planning_core.errors import DependencyCycle, InvalidInput, TaskBlocked
from planning_core.history import Logged
from planning_core.import_export.copying import copy_plans
from planning_core.rendering import timeline
from planning_core.store import History, PlanStore
from planning_core.stores.files import FileStore, historylog, historyread
from tests.support.seed import SUBJECTS, seed_plan
from tests.support.stores import make_store, reopened


def _events(store: PlanStore, plan: str, limit: int = 100) -> list[Logged]:
    assert isinstance(store, History)
    items, cursor = store.plan_events(plan, limit)
    assert cursor is None
    return items


def _said(items: list[Logged]) -> list[str]:
    """Each event as the log command shows it, without the time (newest first)."""
    return [history.event_line(i).split(" ", 2)[2] for i in items]


def test_each_kind_of_change_is_recorded_with_its_author(planner: Planner, store: PlanStore) -> None:
    plan = seed_plan(planner, by="session-a")  # #1, #2 completed; #3 in progress under alice
    planner.create_task(plan, "Add rate limit", blocked_by=[3], by="session-a")
    planner.update_task(plan, 4, subject="Add logout", description="POST /logout, 204", by="session-a")
    planner.update_task(plan, 2, status="pending", by="session-b")  # reopened
    planner.update_task(plan, 5, add_blocked_by=[1], remove_blocked_by=[3], by="session-b")
    planner.update_task(plan, 3, owner="bob", by="session-b")
    planner.update_task(plan, 3, status="completed", by="session-b")
    planner.update_task(plan, 5, status="deleted", by="session-b")
    planner.archive(plan, force=True, by="session-b")
    assert _said(_events(store, plan)) == [
        "archived (by session-b)",
        "#5 deleted (by session-b)",
        "#3 completed (by session-b)",
        "#3 taken over from alice (by session-b)",
        "#5 blocked by +#1 -#3 (by session-b)",
        "#2 reopened (pending) (by session-b)",
        "#4 changed description, subject (by session-a)",
        "#5 added; blocked by +#3 (by session-a)",
        "#3 claimed by alice (by session-a)",
        "#2 completed (by session-a)",
        "#1 completed (by session-a)",
        "plan created with 4 task(s) (by session-a)",
    ]
    newest = _events(store, plan)[1].event
    assert (newest.op, newest.task, newest.subject) == ("deleted", 5, "Add rate limit")
    taken = _events(store, plan)[3].event
    assert taken.owner == ("alice", "bob") and taken.took_over == "alice" and taken.status is None
    with reopened(store) as again:  # what a restarted server reads
        assert _said(_events(again, plan)) == _said(_events(store, plan))


def test_a_refused_change_records_nothing(planner: Planner, store: PlanStore, plan: str) -> None:
    before = _events(store, plan)
    with pytest.raises(DependencyCycle):
        planner.update_task(plan, 1, add_blocked_by=[4])
    with pytest.raises(TaskBlocked):
        planner.update_task(plan, 4, status="in_progress", owner="carol")
    with pytest.raises(InvalidInput):
        planner.create_task(plan, "x" * 500)
    planner.update_task(plan, 3, status="in_progress", owner="alice")  # already so: nothing changes
    assert _events(store, plan) == before


def test_a_tasks_last_events_newest_first(planner: Planner, store: PlanStore, plan: str) -> None:
    assert isinstance(store, History)
    for k in range(5):
        planner.update_task(plan, 4, description=f"take {k}")
    planner.update_task(plan, 1, status="pending")
    got = store.task_events(plan, 4, 3)
    assert [i.event.task for i in got] == [4, 4, 4] and all(i.event.fields == ["description"] for i in got)
    assert store.task_events(plan, 3, 3)[0].event.owner == ("", "alice")
    assert store.task_events(plan, 99, 3) == []


def test_the_log_pages_newest_first_without_gaps_or_repeats(planner: Planner, store: PlanStore, plan: str) -> None:
    assert isinstance(store, History)
    for k in range(23):
        planner.create_task(plan, f"extra {k}")
    everything = _events(store, plan)
    seen: list[Logged] = []
    cursor: str | None = None
    while True:
        page, cursor = store.plan_events(plan, 7, cursor)
        seen += page
        if cursor is None:
            break
    assert [(i.at, i.event) for i in seen] == [(i.at, i.event) for i in everything]
    assert len(seen) == 23 + 4  # the creates, the seed's 3 changes, the plan's creation
    with pytest.raises(InvalidInput):
        store.plan_events(plan, 7, "not-a-cursor")


def test_since_you_were_last_here(planner: Planner, store: PlanStore, plan: str) -> None:
    planner.update_task(plan, 4, status="pending", owner="bob", by="session-b")
    planner.update_task(plan, 3, status="completed", by="session-b")
    planner.create_task(plan, "Write the docs", by="session-b")
    planner.update_task(plan, 1, status="pending", by="session-b")
    text = timeline.since_text(store, None)
    assert text.splitlines()[1:] == [
        f"- completed (3): {plan} #3 '{SUBJECTS[2]}' by alice; {plan} #2 '{SUBJECTS[1]}' by -; "
        f"{plan} #1 '{SUBJECTS[0]}' by -",
        f"- claimed (1): {plan} #3 '{SUBJECTS[2]}' by alice",
        f"- reopened (1): {plan} #1 '{SUBJECTS[0]}' by session-b",
        f"- added (1): {plan} #5 'Write the docs' by session-b",
    ]
    # Since a moment from now: nothing happened yet.
    assert timeline.since_text(store, time.time() + 5) == ""


def test_since_stays_short(planner: Planner, store: PlanStore, plan: str) -> None:
    for k in range(40):
        planner.create_task(plan, f"extra {k}")
    text = timeline.since_text(store, None)
    assert len(text.splitlines()) <= 5 and "and 31 more" in text and len(text) < 2000


def test_a_copy_keeps_the_history(planner: Planner, store: PlanStore, plan: str, tmp_path: Path) -> None:
    planner.update_task(plan, 4, subject="renamed")
    planner.archive(plan, force=True)
    for kind in ("files", "memory"):
        target = make_store(kind, tmp_path / f"to-{kind}")
        try:
            assert copy_plans(store, target).copied == [plan]
            assert _said(_events(target, plan)) == _said(_events(store, plan))
            assert copy_plans(store, target).identical == [plan]  # a second run changes nothing
            assert _said(_events(target, plan)) == _said(_events(store, plan))
        finally:
            target.close()


def test_the_file_log_is_bounded_by_its_segments(
    monkeypatch: pytest.MonkeyPatch, planner: Planner, file_store: FileStore, plan: str
) -> None:
    monkeypatch.setattr(historylog, "SEGMENT_BYTES", 4096)
    for k in range(150):
        planner.update_task(plan, 4, description=f"take {k}")
    folder = file_store.plan_folder(plan)
    segments = sorted(p.name for p in folder.glob("history*.jsonl"))
    assert segments == sorted(historyread.SEGMENT_NAMES)
    assert all(p.stat().st_size <= 4096 + 1024 for p in folder.glob("history*.jsonl"))
    items = _events(file_store, plan, 1000)
    assert 20 < len(items) < 150  # the oldest were dropped, the newest kept in order
    assert items[0].event.task == 4 and file_store.get_task(plan, 4).description == "take 149"
    takes = [int(i.event.subject and 0) for i in items]  # every kept event readable
    assert len(takes) == len(items)
