"""Repairing `blocks`, reporting unreadable task files, never writing through symlinks."""

from __future__ import annotations

from pathlib import Path

import pytest

from planning_core import CorruptTask, Planner, TaskStatus
from planning_core.rendering.render import startup_summary, task_board
from planning_core.stores.files import FileStore
from tests.support.files import assert_mirrored_on_disk, edit_task, read_task_file, tree_state
from tests.support.seed import list_tasks


def test_disagreeing_blocks_is_repaired(planner: Planner, file_store: FileStore, plan: str) -> None:
    folder = file_store.todo / plan
    for task_id, wrong in ((1, [4]), (4, [1, 2])):
        edit_task(folder, task_id, blocks=wrong)
    snap = file_store.snapshot(plan)
    assert snap.tasks[1].blocks == [2, 3]
    assert snap.tasks[4].blocks == []
    assert list_tasks(planner, plan).tasks[0].blocks == [2, 3]
    assert read_task_file(folder, 1)["blocks"] == [4]  # reading does not write
    assert file_store.repair(plan).rewritten == [1, 4]
    assert read_task_file(folder, 1)["blocks"] == [2, 3]
    assert read_task_file(folder, 4)["blocks"] == []
    assert_mirrored_on_disk(folder)
    before = tree_state(file_store.root)
    assert file_store.repair(plan).rewritten == []
    assert tree_state(file_store.root) == before


@pytest.fixture
def corrupt3(file_store: FileStore, plan: str) -> Path:
    path = file_store.todo / plan / "task_3.json"
    path.write_bytes(path.read_bytes()[:40])  # truncated JSON
    return path


def test_corrupt_task_is_reported_everywhere(
    planner: Planner, file_store: FileStore, plan: str, corrupt3: Path
) -> None:
    raw = corrupt3.read_bytes()
    snap = file_store.snapshot(plan)
    assert sorted(snap.tasks) == [1, 2, 4]
    assert [(c.task_id, c.file) for c in snap.corrupt] == [(3, "task_3.json")]
    assert snap.progress().total == 4
    assert snap.tasks[1].blocks == [2, 3]  # the edge to the unreadable #3 is kept, not guessed away
    page = list_tasks(planner, plan)
    assert [t.id for t in page.tasks] == [1, 2, 4]
    assert [(c.task_id, c.file) for c in page.unreadable] == [(3, "task_3.json")]
    board = task_board(page.plan, page.tasks, page.open_blockers, page.unreadable)
    assert "#3 [unreadable] task_3.json" in board.splitlines()[3]
    assert "[!] #3: task_3.json is unreadable" in startup_summary([snap])
    with pytest.raises(CorruptTask) as info:
        planner.get_task(plan, "#3")
    assert "task_3.json" in str(info.value) and "#3" in str(info.value)
    assert corrupt3.read_bytes() == raw


def test_other_tasks_keep_working_and_corrupt_bytes_untouched(
    planner: Planner, file_store: FileStore, plan: str, corrupt3: Path
) -> None:
    raw = corrupt3.read_bytes()
    assert planner.create_task(plan, "five", blocked_by=[1], blocks=[4]).id == 5
    planner.update_task(plan, 2, subject="JWT middleware", metadata={"k": 1})
    planner.update_task(plan, 4, add_blocked_by=[2])  # already there: no-op
    c = planner.update_task(plan, 5, status="completed")  # #5 blocks #4, which is blocked by corrupt #3
    assert c.completed and c.unblocked == []
    planner.update_task(plan, 5, status="pending")
    planner.update_task(plan, 1, status="pending")  # #1 blocks the corrupt #3
    c = planner.update_task(plan, 1, status="completed")
    assert c.completed and [t.id for t in c.unblocked] == [5] and not c.all_done
    assert file_store.repair(plan).rewritten == []
    assert corrupt3.read_bytes() == raw
    assert read_task_file(file_store.todo / plan, 2)["subject"] == "JWT middleware"


@pytest.mark.parametrize(
    "edge_call",
    [
        lambda p, n: p.update_task(n, 1, remove_blocks=[3]),
        lambda p, n: p.update_task(n, 2, add_blocks=[3]),
        lambda p, n: p.update_task(n, 2, add_blocked_by=["#3"]),
        lambda p, n: p.create_task(n, "x", blocked_by=[3]),
        lambda p, n: p.create_task(n, "x", blocks=[3]),
        lambda p, n: p.update_task(n, 1, status="deleted"),  # would edit #3's blockedBy
        lambda p, n: p.update_task(n, 3, subject="rewrite me"),
        lambda p, n: p.update_task(n, 3, status="deleted"),
        lambda p, n: p.update_task(n, 4, status="in_progress"),  # cannot tell if #3 is finished
    ],
)
def test_touching_a_corrupt_task_refuses_and_changes_nothing(
    planner: Planner, file_store: FileStore, plan: str, corrupt3: Path, edge_call: object
) -> None:
    before = tree_state(file_store.root)
    with pytest.raises(CorruptTask, match=r"task_3\.json"):
        edge_call(planner, plan)  # type: ignore[operator]
    assert tree_state(file_store.root) == before


@pytest.mark.parametrize(
    "content",
    [b"", b"not json", b"[" * 100_000, b'{"id": 3}', b'{"id": 7, "subject": "wrong id"}', b"\xff\xfe", b"[]",
     b'{"id": 3, "subject": "s", "status": "deleted"}'],
)  # fmt: skip
def test_kinds_of_corruption_are_reported(file_store: FileStore, plan: str, content: bytes) -> None:
    path = file_store.todo / plan / "task_3.json"
    path.write_bytes(content)
    snap = file_store.snapshot(plan)
    assert [c.task_id for c in snap.corrupt] == [3]
    assert sorted(snap.tasks) == [1, 2, 4]
    assert path.read_bytes() == content


def test_symlinked_task_is_reported_and_never_written_through(
    planner: Planner, file_store: FileStore, plan: str, tmp_path: Path
) -> None:
    folder = file_store.todo / plan
    outside = tmp_path / "outside.json"
    outside.write_bytes((folder / "task_2.json").read_bytes())  # a valid task #2
    target_bytes = outside.read_bytes()
    (folder / "task_2.json").unlink()
    (folder / "task_2.json").symlink_to(outside)

    snap = file_store.snapshot(plan)
    assert [c.file for c in snap.corrupt] == ["task_2.json"]
    assert "symbolic link" in snap.corrupt[0].reason
    with pytest.raises(CorruptTask, match=r"task_2\.json"):
        planner.get_task(plan, 2)
    for call in (
        lambda: planner.update_task(plan, 2, subject="hijack"),
        lambda: planner.update_task(plan, 2, status="deleted"),
        lambda: planner.update_task(plan, 1, remove_blocks=[2]),
        lambda: planner.create_task(plan, "x", blocks=[2]),
    ):
        with pytest.raises(CorruptTask):
            call()
    # work around it
    planner.update_task(plan, 1, status="pending")
    planner.update_task(plan, 1, status="completed")
    planner.update_task(plan, 3, status="completed")
    planner.create_task(plan, "five", blocked_by=[4])
    # The link lives in #4's blockedBy: dropped without writing through the link.
    assert planner.update_task(plan, 4, remove_blocked_by=[2]).changed == ["blockedBy"]
    file_store.repair(plan)
    assert (folder / "task_2.json").is_symlink()
    assert outside.read_bytes() == target_bytes
    assert file_store.snapshot(plan).tasks[3].status is TaskStatus.COMPLETED
