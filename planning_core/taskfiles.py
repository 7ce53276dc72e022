"""One task per file: naming, reading (never following links), and the rules for
reading a folder of them (blocks derived from blockedBy)."""

from __future__ import annotations

import errno
import json
import os
import re
from collections.abc import Collection
from pathlib import Path

from pydantic import ValidationError

from .errors import CorruptTask, TaskNotFound
from .models import Task

TASK_FILE = re.compile(r"task_([1-9]\d{0,8})\.json", re.ASCII)
HIGHWATERMARK = ".highwatermark"
LOCK = ".lock"
PLAN_MD = "plan.md"

def task_filename(task_id: int) -> str:
    return f"task_{task_id}.json"


def read_task(path: Path, task_id: int) -> Task | str:
    """The task, or the reason it cannot be read. Symlinks are never followed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "it is a symbolic link, not a task file"
        return f"cannot open it ({e.strerror})"
    try:
        with os.fdopen(fd, "rb") as f:
            raw = f.read()
    except OSError as e:
        return f"cannot read it ({e.strerror})"
    try:
        task = Task.model_validate(json.loads(raw))
    except (ValueError, ValidationError, RecursionError) as e:
        return f"invalid task JSON ({(str(e).splitlines() or [type(e).__name__])[0][:120]})"
    if task.id != task_id:
        return f"its id field is {task.id}, not {task_id}"
    return task


def load_task(path: Path, task_id: int) -> Task:
    filename = task_filename(task_id)
    try:
        loaded = read_task(path / filename, task_id)
    except FileNotFoundError:
        raise TaskNotFound(path.name, [task_id]) from None
    if isinstance(loaded, str):
        raise CorruptTask(path.name, task_id, filename, loaded)
    return loaded


def derive_blocks(tasks: dict[int, Task], unreadable: Collection[int] = ()) -> None:
    """Derive every `blocks` from the `blockedBy` lists (the source of truth).

    A task that needs repairing is replaced in `tasks` by a repaired copy; the Task
    objects passed in are never changed (they may be a cache's). An edge to an
    unreadable task cannot be checked against its `blockedBy`, so it is kept as stored
    rather than dropped (the file is reported, not guessed at)."""
    derived: dict[int, set[int]] = {i: set() for i in tasks}
    for t in tasks.values():
        for b in t.blocked_by:
            if b in derived and b != t.id:
                derived[b].add(t.id)
    for i, t in tasks.items():
        blocks = sorted(derived[i] | {b for b in t.blocks if b in unreadable})
        if blocks != t.blocks or i in t.blocked_by:
            repaired = t.clone()
            repaired.blocks = blocks
            repaired.blocked_by = [b for b in t.blocked_by if b != i]
            tasks[i] = repaired
