"""One task per file: naming and reading (never following links), without the models
(taskload.py validates what is read here; plainread.py reads plans without them)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...fileio.regular import UnreadableFile, read_regular
from ...names import MAX_TASK_ID
from ...taskjson import task_filename

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


def task_bytes(path: Path | str, st: os.stat_result | None = None) -> bytes | str:
    """The task file's bytes, or the reason they cannot be read. Only regular files are
    opened (never a symlink, FIFO or device), and at most MAX_TASK_FILE_BYTES of them.
    FileNotFoundError if there is no file. `st`: the caller's lstat of it, if any."""
    try:
        return read_regular(path, MAX_TASK_FILE_BYTES, "a task file", st)
    except UnreadableFile as e:
        return e.reason
