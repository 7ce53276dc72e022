from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planning_core.stores.files.merge.taskmerge import INCOMING
from tests.support.files import assert_mirrored_on_disk
from tests.support.gitrepo import Repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo.create(tmp_path / "repo")


def plan_is_whole(repo: Repo) -> dict[int, dict[str, Any]]:
    """The invariants a merge must leave: no conflict markers, every file a task, ids unique
    (one file each), edges mirrored, no cycle, the high-water mark at least every id, no task
    left parked, and everything committed. Returns the tasks by id."""
    folder = repo.folder()
    for path in folder.iterdir():
        assert "<<<<<<<" not in path.read_text(errors="replace"), path
    tasks = assert_mirrored_on_disk(folder)
    assert int((folder / ".highwatermark").read_text()) >= max(tasks, default=0)  # no task left: both deleted it
    assert all(INCOMING not in t for t in tasks.values())
    assert repo.tracked_status() == "", repo.tracked_status()
    return tasks


def by_subject(tasks: dict[int, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    found = {t["subject"]: t for t in tasks.values()}
    assert len(found) == len(tasks), "two tasks with one subject"
    return found
