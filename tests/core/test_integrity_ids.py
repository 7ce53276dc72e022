"""Promise: a task id is issued once. At the last id (names.MAX_TASK_ID) TaskCreate is
refused and writes nothing; no acknowledged create overwrites another file; a task file
whose name is out of range is reported as unreadable, never hidden."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planning_core import Planner, StorageError, Task
from planning_core.errors import TaskIdsExhausted
from planning_core.names import MAX_TASK_ID
from planning_core.stores.files import FileStore
from tests.support.files import tree_state
from tests.support.seed import list_tasks

LAST = MAX_TASK_ID


@pytest.fixture
def plan(planner: Planner) -> str:
    return planner.create_plan("Ids", name="ids", date="2026-05-28", tasks=[{"subject": "first"}]).name


def _task_json(task_id: int, subject: str) -> str:
    return Task(id=task_id, subject=subject).to_json()


def test_the_last_id_is_issued_then_creates_are_refused(planner: Planner, file_store: FileStore, plan: str) -> None:
    folder = file_store.todo / plan
    (folder / ".highwatermark").write_text(f"{LAST - 1}\n")  # a hand edit
    last = planner.create_task(plan, "the last one")
    assert last.id == LAST
    before = tree_state(file_store.root)
    for subject in ("a", "b", "c"):
        with pytest.raises(TaskIdsExhausted, match=rf"#{LAST}.*Nothing was written.*PlanCreate"):
            planner.create_task(plan, subject)
    assert tree_state(file_store.root) == before
    # The last task stays visible and readable, with its own subject.
    assert planner.get_task(plan, LAST).subject == "the last one"
    assert [t.id for t in list_tasks(planner, plan).tasks] == [1, LAST]


def test_a_hand_copied_last_task_refuses_creates(planner: Planner, file_store: FileStore, plan: str) -> None:
    folder = file_store.todo / plan
    (folder / f"task_{LAST}.json").write_text(_task_json(LAST, "copied in"))
    (folder / ".highwatermark").unlink()  # copied without it: the files are all there is
    before = tree_state(file_store.root)
    for subject in ("a", "b", "c"):
        with pytest.raises(TaskIdsExhausted):
            planner.create_task(plan, subject, blocked_by=[1])  # nor may a neighbour be touched
    assert tree_state(file_store.root) == before
    assert planner.get_task(plan, LAST).subject == "copied in"


def test_out_of_range_names_are_unreadable_not_hidden(planner: Planner, file_store: FileStore, plan: str) -> None:
    folder = file_store.todo / plan
    strays = {
        f"task_{LAST + 1}.json": _task_json(LAST + 1, "past the limit"),
        "task_0.json": json.dumps({"id": 0, "subject": "zero"}),
        "task_01.json": _task_json(1, "a second #1"),
    }
    for name, text in strays.items():
        (folder / name).write_text(text)
    page = list_tasks(planner, plan)
    assert sorted(c.file for c in page.unreadable) == sorted(strays)
    assert all("not a task id" in c.reason for c in page.unreadable)
    assert [t.id for t in page.tasks] == [1] and page.tasks[0].subject == "first"
    # The strays do not take ids from the plan, and are never overwritten.
    assert planner.create_task(plan, "next").id == 2
    for name, text in strays.items():
        assert (folder / name).read_text() == text


def test_a_new_task_never_replaces_a_file_that_appeared(file_store: FileStore, plan: str) -> None:
    """Under the lock no writer of ours can make task_<new id>.json; a program that ignores
    the lock can. The commit then refuses rather than overwrite it."""
    folder = file_store.todo / plan
    with pytest.raises(StorageError, match=r"task_2\.json appeared"), file_store.transaction(plan) as txn:
        new_id = txn.next_id()
        (folder / f"task_{new_id}.json").write_text(_task_json(new_id, "theirs"))
        txn.put(Task(id=new_id, subject="ours"))
    assert json.loads((folder / "task_2.json").read_text())["subject"] == "theirs"


def test_plan_create_ids_start_at_one(planner: Planner, tmp_path: Path) -> None:
    snap = planner.create_plan("Many", name="many", date="2026-05-28", tasks=[{"subject": f"t{i}"} for i in range(50)])
    assert sorted(snap.tasks) == list(range(1, 51))
    assert planner.create_task(snap.name, "after").id == 51
