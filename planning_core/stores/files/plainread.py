"""A file store's active plans read without the models, for the Claude Code hook's line
before each prompt: each task file read as the store reads it (taskfiles.task_bytes, then
taskjson.load_document) and taken as it reads (taskjson.plain_task); a file the store would
report unreadable counts so here too. A document the plain read cannot take as it is (one
only the models may judge) makes the whole read give up (None): the caller then asks the
store, which validates. No pydantic here."""

from __future__ import annotations

import os
from pathlib import Path

from ...activeplans import PlanLine
from ...names import check_plan_name
from ...taskjson import BadDocument, PlainTask, load_document, plain_task, tally
from .taskfiles import TASK_FILE, misnamed, task_bytes


def list_plans(folder: Path) -> list[str]:
    """The plan folders in todo/ or done/, by name."""
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    names = []
    for e in entries:
        try:
            check_plan_name(e.name)
        except Exception:
            continue
        if e.is_dir(follow_symlinks=False):
            names.append(e.name)
    return sorted(names)


def active_plan_names(root: Path) -> list[str]:
    """The active plans (FileStore.active_plans)."""
    return list_plans(root / "todo")


def active_plan_line(root: Path, name: str) -> PlanLine | None:
    """The active plan's line; None when it needs the models or its folder cannot be read."""
    return plan_line(root / "todo" / name)


def active_plan_lines(root: Path) -> list[PlanLine] | None:
    """Each active plan's line, oldest first; None when a plan needs the models (a document
    the plain read cannot take) or its folder cannot be read."""
    lines = []
    for name in active_plan_names(root):
        line = active_plan_line(root, name)
        if line is None:
            return None
        lines.append(line)
    return lines


def plan_line(folder: Path) -> PlanLine | None:
    try:
        names = os.listdir(folder)
    except OSError:
        return None  # the store says why
    tasks: list[PlainTask] = []
    unreadable = 0
    for file in names:
        hit = TASK_FILE.fullmatch(file)
        if hit is None:
            continue
        task = _read(folder, file, int(hit.group(1)))
        if task is None:
            return None
        if isinstance(task, PlainTask):
            tasks.append(task)
        else:
            unreadable += task
    counted = tally(tasks)
    current = counted.current.subject if counted.current is not None else None
    return PlanLine(folder.name, counted.completed, counted.total + unreadable, current)


def _read(folder: Path, file: str, task_id: int) -> PlainTask | int | None:
    """The task as it reads, 1 for a file the store reports unreadable, 0 for one gone since
    the listing, None for a document only the models may judge."""
    if misnamed(file, task_id):
        return 1
    try:
        raw = task_bytes(os.path.join(folder, file))
    except FileNotFoundError:
        return 0
    if isinstance(raw, str):
        return 1
    try:
        return plain_task(load_document(raw), task_id)
    except BadDocument:
        return 1
