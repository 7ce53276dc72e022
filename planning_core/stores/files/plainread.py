"""A file store's active plans read without the models, for the Claude Code hook's line
before each prompt: each task file read as the store reads it (taskfiles.task_bytes, then
taskjson.load_document) and taken as it reads (taskjson.plain_task); a file the store would
report unreadable counts so here too. A document the plain read cannot take as it is (one
only the models may judge) makes the whole read give up (None): the caller then asks the
store, which validates. No pydantic here."""

from __future__ import annotations

import os
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from ...activeplans import PlanLine
from ...names import check_plan_name
from ...taskjson import BadDocument, LightTask, light_task, load_document, plain_task, tally
from .taskfiles import TASK_FILE, misnamed, task_bytes

if TYPE_CHECKING:
    from ...history import Logged

T = TypeVar("T")


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


def events_since(root: Path, start: str, limit: int) -> list[Logged]:
    """FileStore.events_since without the store opened: the active plans' history logs."""
    from .historyread import since_all  # the history's code: only a session's start reads it

    return since_all(os.fspath(root / "todo"), active_plan_names(root), start, limit)


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
    read = _scan(folder, plain_task)
    if read is None:
        return None
    tasks, unreadable = read
    counted = tally(tasks.values())
    current = counted.current.subject if counted.current is not None else None
    return PlanLine(folder.name, counted.completed, counted.total + len(unreadable), current)


class Unreadable(NamedTuple):
    """A task file the store reports unreadable (models.CorruptFile), by what is judged of it."""

    task_id: int


class LightPlan(NamedTuple):
    """An active plan as done.work_left reads it (models.PlanSnapshot's name, tasks in id
    order and unreadable files), its tasks read without the models (taskjson.light_task)."""

    name: str
    tasks: dict[int, LightTask]
    corrupt: list[Unreadable]


def light_plan(root: Path, name: str) -> LightPlan | None:
    """The active plan read without the models; None when a document needs them (see
    taskjson.light_task) or its folder cannot be read."""
    read = _scan(root / "todo" / name, light_task)
    if read is None:
        return None
    tasks, unreadable = read
    return LightPlan(name, tasks, [Unreadable(i) for i in unreadable])


def _scan(folder: Path, take: Callable[[Any, int], T | None]) -> tuple[dict[int, T], list[int]] | None:
    """The folder's tasks as `take` reads them (in id order) and the ids of the files the store
    reports unreadable (in order); None when a document is one `take` leaves to the models."""
    try:
        names = os.listdir(folder)
    except OSError:
        return None  # the store says why
    tasks: dict[int, T] = {}
    unreadable: list[int] = []
    for file in names:
        hit = TASK_FILE.fullmatch(file)
        if hit is None:
            continue
        task_id = int(hit.group(1))
        task = _read(folder, file, task_id, take)
        if task is None:
            return None
        if task is _Missing.UNREADABLE:
            unreadable.append(task_id)
        elif not isinstance(task, _Missing):
            tasks[task_id] = task
    return dict(sorted(tasks.items())), sorted(unreadable)


class _Missing(Enum):
    """A task file that gives no task: one the store reports unreadable, or gone since the listing."""

    UNREADABLE = "unreadable"
    GONE = "gone"


def _read(folder: Path, file: str, task_id: int, take: Callable[[Any, int], T | None]) -> T | _Missing | None:
    """The task as `take` reads it, _Missing for a file the store reports unreadable or one gone
    since the listing, None for a document only the models may judge."""
    if misnamed(file, task_id):
        return _Missing.UNREADABLE
    try:
        raw = task_bytes(os.path.join(folder, file))
    except FileNotFoundError:
        return _Missing.GONE
    if isinstance(raw, str):
        return _Missing.UNREADABLE
    try:
        return take(load_document(raw), task_id)
    except BadDocument:
        return _Missing.UNREADABLE
