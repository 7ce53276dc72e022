"""What is on disk, read straight from the files: tree hashes, task files, hand edits."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Collection
from pathlib import Path
from typing import Any

from bench.audit import graph_problems, read_tasks

# The contract's task-file fields, in the order Claude Code's seed writes them.
SEED_FIELDS = [
    "id", "subject", "description", "status", "blockedBy", "blocks",
    "owner", "activeForm", "metadata", "createdAt", "updatedAt",
]  # fmt: skip


def tree_state(top: Path, *, skip: Path | None = None, ignore: Collection[str] = ()) -> dict[str, str]:
    """Every entry under `top` by relative path: a sha256 of a regular file's bytes, "dir",
    "-> target" for a symlink (never followed), "special" for a FIFO or socket (never
    opened: that could block). Leaves out the folder `skip` and any entry named in `ignore`
    (e.g. a plan's ".lock", created the first time a writer takes the lock)."""
    state: dict[str, str] = {}
    if not top.exists():
        return state
    for dirpath, dirnames, filenames in os.walk(top):
        base = Path(dirpath)
        dirnames[:] = sorted(n for n in dirnames if base / n != skip and n not in ignore)
        for name in dirnames + sorted(n for n in filenames if n not in ignore):
            path = base / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                value = f"-> {os.readlink(path)}"
            elif stat.S_ISDIR(mode):
                value = "dir"
            elif stat.S_ISREG(mode):
                value = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                value = "special"
            state[path.relative_to(top).as_posix()] = value
    return state


def copied_state(top: Path, ignore: Collection[str] = ()) -> dict[str, object]:
    """tree_state, with each plan's history as the entries it holds (a copy writes them
    anew: the same entries, without the source's commit markers)."""
    from planning_core.stores.files import historyread

    state: dict[str, object] = dict(tree_state(top, ignore={*ignore, *historyread.SEGMENT_NAMES}))
    for log in sorted(top.rglob(historyread.LOG)):
        entries = historyread.read_all(str(log.parent), archived=log.parent.parent.name == "done")
        state[log.relative_to(top).as_posix()] = [e.to_dict() for e in entries]
    return state


def read_task_file(folder: Path, task_id: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / f"task_{task_id}.json").read_text())
    return data


def edit_task(folder: Path, task_id: int, **fields: Any) -> None:
    """A hand edit of one task file (what a crash of an older version or a person leaves)."""
    data = read_task_file(folder, task_id)
    data.update(fields)
    (folder / f"task_{task_id}.json").write_text(json.dumps(data))


def assert_mirrored_on_disk(folder: Path) -> dict[int, dict[str, Any]]:
    """Every task file parses, and the graph on disk is sound: `blocks` mirrors `blockedBy`,
    no duplicate, no link to a missing task, no cycle. Returns the tasks by id."""
    tasks, bad = read_tasks(folder)
    assert bad == [], f"unreadable task files {bad}"
    assert graph_problems(tasks) == [], graph_problems(tasks)
    return tasks
