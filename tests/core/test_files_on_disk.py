"""The on-disk layout is exactly the contract's (files), each backend stores the contract's
task documents and plan.md, and every backend's plans survive a restart."""

from __future__ import annotations

import json

from planning_core import Planner, TaskStatus
from planning_core.store import PlanStore
from planning_core.stores.files import FileStore
from tests.support.files import SEED_FIELDS, assert_mirrored_on_disk
from tests.support.seed import SUBJECTS, seed_plan
from tests.support.stores import assert_mirrored, reopened, stored_plan, stored_tasks

# What a plan folder of the four-task seed holds, in the order sorted() gives.
SEED_FOLDER = sorted(["plan.md", *(f"task_{i}.json" for i in range(1, 5)), ".highwatermark", ".lock", "history.jsonl"])


def _build_by_calls(planner: Planner) -> str:
    snap = planner.create_plan(
        "Add auth", analysis="Users need to log in.", approach="JWT.", steps=["Schema", "Endpoints"],
        date="2026-05-28",
    )  # fmt: skip
    name = snap.name
    assert [planner.create_task(name, SUBJECTS[0], "tables", active_form="Designing auth schema").id] == [1]
    assert planner.create_task(name, SUBJECTS[1], "mw", blocked_by=[1]).id == 2
    assert planner.create_task(name, SUBJECTS[2], "login", blocked_by="1").id == 3
    assert planner.create_task(name, SUBJECTS[3], "logout", blocked_by=["#2", 3]).id == 4
    planner.update_task(name, 1, status="in_progress", owner="me")
    planner.update_task(name, 1, status="completed")
    planner.update_task(name, "2", status="completed")
    return name


def test_folder_holds_exactly_the_contract_files(planner: Planner, file_store: FileStore) -> None:
    name = _build_by_calls(planner)
    assert name == "2026-05-28-add-auth"
    assert sorted(p.name for p in file_store.root.iterdir()) == [".gitignore", "done", "todo"]
    assert [p.name for p in file_store.todo.iterdir()] == [name]
    folder = file_store.todo / name
    assert sorted(p.name for p in folder.iterdir()) == SEED_FOLDER
    assert int((folder / ".highwatermark").read_text().strip()) == 4


def test_task_files_have_seed_fields_in_order_and_mirror_edges(planner: Planner, store: PlanStore) -> None:
    name = _build_by_calls(planner)
    tasks = assert_mirrored(store, name)
    for i in range(1, 5):
        data = json.loads(stored_plan(store, name)[2][i])  # the document as stored, in its order
        assert list(data) == SEED_FIELDS
        assert data["id"] == i
        assert data["subject"] == SUBJECTS[i - 1]
        assert data["createdAt"] and data["updatedAt"]
    assert (tasks[1]["blockedBy"], sorted(tasks[1]["blocks"])) == ([], [2, 3])
    assert (tasks[2]["blockedBy"], tasks[2]["blocks"]) == ([1], [4])
    assert (tasks[3]["blockedBy"], tasks[3]["blocks"]) == ([1], [4])
    assert (sorted(tasks[4]["blockedBy"]), tasks[4]["blocks"]) == ([2, 3], [])
    assert [tasks[i]["status"] for i in range(1, 5)] == ["completed", "completed", "pending", "pending"]
    assert tasks[1]["owner"] == "me"
    assert tasks[1]["activeForm"] == "Designing auth schema"
    assert tasks[1]["metadata"] == {}


def test_plan_md_has_the_four_sections(planner: Planner, store: PlanStore) -> None:
    name = _build_by_calls(planner)
    md = store.read_plan_md(name)
    assert md == stored_plan(store, name)[0]
    assert md.startswith("# Add auth\n")
    positions = [md.index(h) for h in ("\n## Analysis\n", "\n## Approach\n", "\n## Steps\n")]
    assert positions == sorted(positions)
    assert "Users need to log in." in md
    assert "1. Schema" in md and "2. Endpoints" in md


def test_plan_create_with_tasks_writes_mirrored_files(planner: Planner, file_store: FileStore) -> None:
    snap = planner.create_plan(
        "Diamond", date="2026-05-28",
        tasks=[{"subject": "a"}, {"subject": "b", "blockedBy": [1]}, {"subject": "c", "blockedBy": [1]},
               {"subject": "d", "blockedBy": [2, 3]}],
    )  # fmt: skip
    folder = file_store.todo / snap.name
    tasks = assert_mirrored_on_disk(folder)
    assert sorted(tasks[1]["blocks"]) == [2, 3]
    assert all(list(t) == SEED_FIELDS for t in tasks.values())
    assert int((folder / ".highwatermark").read_text()) == 4
    assert not [p for p in file_store.todo.iterdir() if p.name.startswith(".")]
    md = (folder / "plan.md").read_text()
    assert "## Steps" in md and "(task #4)" in md


def test_restart_sees_the_same_graph(planner: Planner, store: PlanStore) -> None:
    name = _build_by_calls(planner)
    before = store.snapshot(name)
    with reopened(store) as fresh:
        again = Planner(fresh)
        after = fresh.snapshot(name)
        assert after.model_dump() == before.model_dump()
        assert fresh.active_plans() == [name]
        assert after.tasks[4].blocked_by == [2, 3]
        assert after.tasks[1].status is TaskStatus.COMPLETED
        # and it keeps numbering where the first left off
        assert again.create_task(name, "Add password reset").id == 5
    assert stored_tasks(store, name)[5]["subject"] == "Add password reset"


def test_an_archived_folder_holds_exactly_the_contract_files(planner: Planner, file_store: FileStore) -> None:
    name = seed_plan(planner)
    planner.archive(name, force=True)
    assert [p.name for p in file_store.todo.iterdir()] == []
    assert sorted(p.name for p in (file_store.done / name).iterdir()) == SEED_FOLDER
