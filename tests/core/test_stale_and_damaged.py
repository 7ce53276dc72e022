"""Stale mirrors, damaged folders and odd file-system states: the plan stays usable and
nothing is reported as done that was not (found in review; each once failed)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import traceback
from pathlib import Path

import pytest

from planning_core import Planner, TaskStatus
from planning_core.errors import ArchiveExists, InvalidTaskId, StorageError
from planning_core.fileio import atomic
from planning_core.stores.files import FileStore
from tests.support.files import edit_task, tree_state
from tests.support.seed import list_tasks


def _plan(planner: Planner, n: int = 3) -> str:
    tasks = [{"subject": f"t{i}", "blockedBy": [1] if i > 1 else []} for i in range(1, n + 1)]
    return planner.create_plan("Stale", date="2026-05-28", tasks=tasks).name


def test_delete_clears_dependents_even_when_blocks_is_stale(planner: Planner, file_store: FileStore) -> None:
    plan = _plan(planner)
    edit_task(file_store.todo / plan, 1, blocks=[])  # a crash or a hand edit lost the mirror
    planner.update_task(plan, 1, status="deleted")
    for i in (2, 3):
        assert planner.get_task(plan, i).blocked_by == []
    assert planner.update_task(plan, 2, status="in_progress").started


def test_a_dangling_blocker_does_not_block(planner: Planner, file_store: FileStore) -> None:
    plan = _plan(planner, 2)
    os.unlink(file_store.todo / plan / "task_1.json")  # removed by hand, #2 still names it
    assert [t.id for t in list_tasks(planner, plan, status="ready").tasks] == [2]
    assert planner.update_task(plan, 2, status="in_progress").started


def test_add_blocks_writes_the_neighbour_when_only_it_changes(planner: Planner, file_store: FileStore) -> None:
    plan = _plan(planner)
    edit_task(file_store.todo / plan, 3, blocks=[2])  # stale: #2 does not list #3 as a blocker
    change = planner.update_task(plan, 3, add_blocks=[2])
    assert change.changed == ["blocks"]
    assert 3 in planner.get_task(plan, 2).blocked_by


def test_missing_highwatermark_never_reuses_a_live_id(planner: Planner, file_store: FileStore) -> None:
    plan = _plan(planner)
    planner.update_task(plan, 1, status="deleted")
    os.unlink(file_store.todo / plan / ".highwatermark")  # e.g. the folder was copied with cp dir/*
    assert planner.create_task(plan, "new", "d").id == 4


def test_a_folder_where_plan_md_should_be_does_not_break_listing(planner: Planner, file_store: FileStore) -> None:
    good = _plan(planner)
    bad = file_store.todo / "2026-05-29-bad"
    (bad / "plan.md").mkdir(parents=True)
    names = [s.name for s in planner.summaries()]
    assert names == [good, "2026-05-29-bad"]


NOBODY = 65534  # root reads any folder, so as root the check runs as this user


def _unreadable_folder_check(root: Path) -> None:
    store = FileStore(root)
    store.ensure_writable()
    planner = Planner(store)
    good = _plan(planner)
    bad = store.todo / "2026-05-29-bad"
    bad.mkdir()
    bad.chmod(0)
    try:
        summaries = {s.name: s for s in planner.summaries()}
        assert summaries[good].progress.total == 3
        assert summaries["2026-05-29-bad"].unreadable == 1
    finally:
        bad.chmod(0o755)


def test_unreadable_plan_folder_is_listed_as_unreadable(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        _unreadable_folder_check(tmp_path / "root")
        return
    # As root, chmod cannot make a folder unreadable: a forked child drops to `nobody` first,
    # in a folder that user may write (pytest's own temp folders are root's alone).
    base = Path(tempfile.mkdtemp(prefix="planning-unreadable-", dir="/tmp"))
    base.chmod(0o777)
    try:
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 1
            try:
                os.setgid(NOBODY)
                os.setuid(NOBODY)
                _unreadable_folder_check(base / "root")
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "the check failed as an unprivileged user (see stderr)"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_rename_failure_before_any_replace_changes_nothing(planner: Planner, file_store: FileStore) -> None:
    plan = _plan(planner)
    folder = file_store.todo / plan
    (folder / ".highwatermark").unlink()
    (folder / ".highwatermark").mkdir()  # the mark's rename will fail
    before = tree_state(file_store.root)
    with pytest.raises(StorageError, match="Nothing was changed"):
        planner.create_task(plan, "x", "d")
    assert tree_state(file_store.root) == before  # no task file, no temp file left


def test_rename_failure_after_a_replace_is_reported_as_partial(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    second.mkdir()  # its rename will fail after the first one succeeded
    with pytest.raises(atomic.PartialWrite) as info:
        atomic.replace_many([(first, b"1"), (second, b"2")])
    assert info.value.replaced == [first]
    assert first.read_bytes() == b"1"
    assert not [p for p in tmp_path.iterdir() if atomic.is_temp(p.name)]


def test_huge_ids_are_refused_not_crashed(planner: Planner) -> None:
    plan = _plan(planner)
    for value in (10**12, 10**5000, "1000000000"):
        with pytest.raises(InvalidTaskId):
            planner.get_task(plan, value)


def test_archiving_onto_an_existing_archive_names_the_fix(planner: Planner, file_store: FileStore) -> None:
    plan = _plan(planner, 1)
    planner.update_task(plan, 1, status="completed")
    (file_store.done / plan).mkdir(parents=True)
    with pytest.raises(ArchiveExists, match="Rename one of the two folders"):
        planner.archive(plan)


def test_old_staging_folders_are_cleaned_young_ones_kept(file_store: FileStore) -> None:
    file_store.make_layout()  # as the first plan makes it
    old = file_store.todo / ".staging-1-dead"
    young = file_store.todo / ".staging-2-busy"
    for folder in (old, young):
        folder.mkdir()
        (folder / "plan.md").write_text("# x\n")
    past = time.time() - 7200
    os.utime(old, (past, past))
    assert file_store.clean_staging() == 1
    assert not old.exists() and young.exists()


def test_completing_reports_unblocked_without_reading_the_whole_plan(planner: Planner) -> None:
    plan = _plan(planner)
    change = planner.update_task(plan, 1, status="completed")
    assert [t.id for t in change.unblocked] == [2, 3]
    assert not change.all_done
    planner.update_task(plan, 2, status="completed")
    assert planner.update_task(plan, 3, status="completed").all_done
    assert all(t.status is TaskStatus.COMPLETED for t in planner.store.snapshot(plan).tasks.values())


def test_completion_never_names_a_task_it_does_not_block(planner: Planner, file_store: FileStore) -> None:
    plan = planner.create_plan(
        "Stale", date="2026-05-28", tasks=[{"subject": "a"}, {"subject": "b", "blockedBy": [1]}, {"subject": "c"}]
    ).name
    edit_task(file_store.todo / plan, 1, blocks=[3])  # stale: #3 is not blocked by #1, #2 is
    change = planner.update_task(plan, 1, status="completed")
    assert 3 not in [t.id for t in change.unblocked]
