"""A task file read and validated: taskfiles.py's plain read, judged by the models
(taskdoc.parse_task: the one rule for a task document)."""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import CorruptTask, TaskNotFound
from ...models import Task
from ...taskdoc import parse_task, task_filename
from .taskfiles import task_bytes


def read_task(path: Path | str, task_id: int, st: os.stat_result | None = None) -> Task | str:
    """The task, or the reason it cannot be read (taskfiles.task_bytes: which files are
    opened). FileNotFoundError if there is no file. `st`: the caller's lstat of it, if any."""
    raw = task_bytes(path, st)
    return raw if isinstance(raw, str) else parse_task(raw, task_id)


def load_task(path: Path, task_id: int) -> Task:
    filename = task_filename(task_id)
    try:
        loaded = read_task(os.path.join(path, filename), task_id)  # not pathlib: see foldercache._load
    except FileNotFoundError:
        raise TaskNotFound(path.name, [task_id]) from None
    if isinstance(loaded, str):
        raise CorruptTask(path.name, task_id, filename, loaded)
    return loaded
