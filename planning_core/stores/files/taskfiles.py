"""One task per file: naming, reading (never following links), and the rules for
reading a folder of them (blocks derived from blockedBy)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...errors import CorruptTask, TaskNotFound
from ...fileio.regular import UnreadableFile, read_regular
from ...models import Task
from ...names import MAX_TASK_ID
from ...taskdoc import parse_task, task_filename

# Wider than the names the store writes, so a stray one (task_0.json, task_07.json, an id
# past MAX_TASK_ID) is reported as unreadable (see misnamed), never silently hidden.
TASK_FILE = re.compile(r"task_(\d+)\.json", re.ASCII)
HIGHWATERMARK = ".highwatermark"
LOCK = ".lock"
PLAN_MD = "plan.md"
# What a git merge changed in the plan (gitmerge.py writes it, the server reports it once);
# never committed (git-setup puts it in .git/info/exclude).
MERGE_NOTES = ".merge-notes"
PLAN_AREAS = ("todo", "done")  # a root's folders of plan folders: <root>/<area>/<plan>/

# The largest task file we read. The contract bounds a task's content (subject 200 and
# description 20,000 characters, metadata 16 KB, nested at most validate.MAX_METADATA_DEPTH
# deep): written with indent=2 and \u escapes that is well under 300 KB, leaving room for
# tens of thousands of edges. Anything bigger was not written by us, and parsing it on the
# request path stalls everyone (100 MB took 1.5-2.3 s), so it is reported unreadable.
MAX_TASK_FILE_BYTES = 1024 * 1024


def misnamed(name: str, task_id: int) -> str | None:
    """Why a TASK_FILE name is not one the store writes, or None if it is."""
    if 1 <= task_id <= MAX_TASK_ID and name == task_filename(task_id):
        return None
    return f"its name is not a task id (task_1.json to task_{MAX_TASK_ID}.json); rename or remove it"


def read_task(path: Path | str, task_id: int, st: os.stat_result | None = None) -> Task | str:
    """The task, or the reason it cannot be read. Only regular files are opened (never
    a symlink, FIFO or device), and at most MAX_TASK_FILE_BYTES of them.
    FileNotFoundError if there is no file. `st`: the caller's lstat of it, if any."""
    try:
        raw = read_regular(path, MAX_TASK_FILE_BYTES, "a task file", st)
    except UnreadableFile as e:
        return e.reason
    return parse_task(raw, task_id)


def load_task(path: Path, task_id: int) -> Task:
    filename = task_filename(task_id)
    try:
        loaded = read_task(os.path.join(path, filename), task_id)  # not pathlib: see foldercache._load
    except FileNotFoundError:
        raise TaskNotFound(path.name, [task_id]) from None
    if isinstance(loaded, str):
        raise CorruptTask(path.name, task_id, filename, loaded)
    return loaded
