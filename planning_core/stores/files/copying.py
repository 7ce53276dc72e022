"""The file store's half of `Copyable`: every plan folder out as a PlanRecord, and a
PlanRecord in as a plan folder, exactly.

Export copies what is on disk, not what the planner would make of it: plan.md's text,
the high-water mark, and every task_<N>.json's bytes as they are (a damaged file too, so
that the copy is as damaged as the original and nothing is guessed). Import builds the
folder the way create_plan does (a hidden staging folder, each file synced, then one
rename into todo/ or done/), so a crash leaves either the whole plan or no plan.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from ...errors import PlanBusy, PlanExists, PlanningError, PlanNotStorable, PlanUnreadable, StorageError
from ...fileio import atomic
from ...fileio.regular import MAX_HIGHWATERMARK_BYTES, MAX_PLAN_MD_BYTES, UnreadableFile, read_regular
from ...names import MAX_TASK_ID, check_plan_name
from ...store import MAX_COPIED_PLAN_BYTES, PlanRecord
from . import historylog, historyread
from .planlock import LockTimeout, LockUnavailable, plan_lock
from .stagedfolder import staged_plan_folder
from .taskfiles import HIGHWATERMARK, LOCK, PLAN_MD, TASK_FILE, misnamed

# Bytes are copied, never parsed, so a task file bigger than the request path reads
# (taskfiles.MAX_TASK_FILE_BYTES) is still copied whole, within the plan's bound
# (store.MAX_COPIED_PLAN_BYTES). Files past that bound, anything that is not a regular
# file (a FIFO, a symlink, a folder) and names the store does not write are left behind
# and named in the record's left_behind: the source store cannot read them either.
# Read apart, or (.lock) made afresh by the target.
OWN_ENTRIES = frozenset({PLAN_MD, HIGHWATERMARK, LOCK, *historyread.SEGMENT_NAMES})


class FolderTree(Protocol):
    """What copying needs of the file store (store.FileStore), which imports this module."""

    @property
    def todo(self) -> Path: ...
    @property
    def done(self) -> Path: ...
    @property
    def lock_timeout(self) -> float: ...
    def active_plans(self) -> list[str]: ...
    def archived_plans(self) -> list[str]: ...
    def make_layout(self) -> None: ...


NOT_A_TASK_FILE = "not a task file (a plan folder holds plan.md and task_<N>.json files); copy it by hand"


def export_plans(store: FolderTree) -> Iterator[PlanRecord]:
    """Every plan, active and archived, oldest first (names begin with their date)."""
    plans = sorted([(n, False) for n in store.active_plans()] + [(n, True) for n in store.archived_plans()])
    for name, archived in plans:
        try:
            record = _export(store, name, archived)
        except PlanningError as e:  # this plan only: the others are still read
            record = PlanRecord(name, archived, "", 0, unreadable=str(e))
        if record is not None:
            yield record


def import_plan(store: FolderTree, record: PlanRecord) -> bool:
    """Write the plan as recorded. False when a plan of that name is already stored exactly
    so (nothing is written); PlanExists when a different one is (nothing is written)."""
    name = check_plan_name(record.name)  # the name becomes a path: nothing else gets near one
    wanted = _normal(record)
    if _already(store, wanted):
        return False
    target = (store.done if record.archived else store.todo) / name
    try:
        store.make_layout()
    except OSError as e:
        raise StorageError(f"the plan folder {store.todo.parent}", e.strerror or str(e)) from None
    # Staging goes in todo/ even for an archived plan: clean_staging removes what a crash
    # leaves there, and todo/ and done/ share a file system (archive renames between them).
    try:
        log = historylog.copied_log(record.history) if record.history else None
        with staged_plan_folder(store.todo, wanted.plan_md, wanted.tasks, wanted.high_water, log) as staging:
            # Another copy may have got there while we staged; and rename() would replace an
            # empty folder of that name, so one that appeared is looked at first.
            if any(os.path.lexists(f / name) for f in (store.todo, store.done)) and _already(store, wanted):
                return False
            try:
                os.rename(staging, target)
            except OSError as e:
                if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                    raise
                if _already(store, wanted):
                    return False
                raise PlanExists(name) from None
        atomic.fsync_dir(target.parent)
        if target.parent != store.todo:
            atomic.fsync_dir(store.todo)  # the staging entry left todo/
        return True
    except OSError as e:
        raise StorageError(f"the plan {name}", e.strerror or str(e)) from None


# -- reading one plan folder -------------------------------------------------------------


def _export(store: FolderTree, name: str, archived: bool) -> PlanRecord | None:
    """The plan's record, read under its lock when active (so that no writer is half way
    through a change between two of its files). None if it went away meanwhile."""
    folder = (store.done if archived else store.todo) / name
    if archived:
        return _read(folder, name, archived=True) if folder.is_dir() else None
    with _locked(folder, name, store.lock_timeout) as present:
        if present and folder.is_dir():
            return _read(folder, name, archived=False)
    done = store.done / name  # archived between the listing and the lock
    return _read(done, name, archived=True) if done.is_dir() else None


@contextlib.contextmanager
def _locked(folder: Path, name: str, timeout: float) -> Iterator[bool]:
    """Hold the plan's writer lock; yields False when the folder is gone. A lock that
    cannot be taken because the folder is read-only is done without: no writer of ours
    can change a plan that cannot be written."""
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(plan_lock(folder / LOCK, timeout))
            present = True
        except LockTimeout:
            raise PlanBusy(name, timeout) from None
        except LockUnavailable as e:
            if isinstance(e.error, FileNotFoundError):
                present = False
            elif e.error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                present = True
            else:
                raise StorageError(f"the lock file {name}/{LOCK}", str(e)) from None
        yield present


def _read(folder: Path, name: str, *, archived: bool) -> PlanRecord:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as e:
        raise PlanUnreadable(name, f"cannot list {folder} ({e.strerror or e})") from None
    tasks: dict[int, bytes] = {}
    on_disk = [0]
    left_behind: list[str] = []
    budget = MAX_COPIED_PLAN_BYTES
    for entry in entries:
        if entry.name in OWN_ENTRIES:
            continue
        match = TASK_FILE.fullmatch(entry.name)
        if not match:
            left_behind.append(f"{entry.name}: {NOT_A_TASK_FILE}")
            continue
        task_id = int(match.group(1))
        if task_id <= MAX_TASK_ID:
            on_disk.append(task_id)  # named like a task: its id counts as issued (as next_id counts it)
        data = _task_bytes(entry, task_id, budget)
        if isinstance(data, str):
            left_behind.append(f"{entry.name}: {data}")
        elif data is not None:
            tasks[task_id] = data
            budget -= len(data)
    plan_md = _plan_md(folder, left_behind)
    return PlanRecord(
        name=name,
        archived=archived,
        plan_md=plan_md,
        high_water=max(_mark(folder), *on_disk),
        tasks=dict(sorted(tasks.items())),
        left_behind=tuple(left_behind),
        history=historyread.read_all(os.fspath(folder), archived=archived),
    )


def _task_bytes(entry: os.DirEntry[str], task_id: int, budget: int) -> bytes | str | None:
    """The task file's bytes; or why they are left behind; None when it went away."""
    why = misnamed(entry.name, task_id)  # task_07.json is not task 7: only task_7.json is
    if why is not None:
        return why
    try:
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISREG(st.st_mode) and st.st_size > budget:
            return (
                f"it is {st.st_size:,} bytes, more than the {budget:,} left of the {MAX_COPIED_PLAN_BYTES:,} "
                "a copy reads of one plan; copy it by hand"
            )
        return read_regular(entry.path, budget, "what a copy reads of one plan", st)
    except FileNotFoundError:
        return None
    except UnreadableFile as e:
        return e.reason


def _plan_md(folder: Path, left_behind: list[str]) -> str:
    """plan.md's text; empty when there is none or it cannot be read (then said in
    `left_behind`, as is a text that is not UTF-8: copied with U+FFFD for those bytes)."""
    try:
        data = read_regular(folder / PLAN_MD, MAX_PLAN_MD_BYTES, "plan.md")
    except FileNotFoundError:
        return ""
    except UnreadableFile as e:
        left_behind.append(f"{PLAN_MD}: {e.reason}; the copy's plan.md is empty")
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        left_behind.append(f"{PLAN_MD}: byte {e.start:,} is not UTF-8; copied with U+FFFD in place of such bytes")
        return data.decode("utf-8", errors="replace")


def _mark(folder: Path) -> int:
    """The stored high-water mark, or 0 when it is missing or not one we wrote."""
    try:
        mark = int(read_regular(folder / HIGHWATERMARK, MAX_HIGHWATERMARK_BYTES).strip())
    except (OSError, ValueError, UnreadableFile):
        return 0
    return mark if 0 <= mark <= MAX_TASK_ID else 0


# -- comparing -----------------------------------------------------------------------------


def _normal(record: PlanRecord) -> PlanRecord:
    """The record as it would be read back: ids checked, sorted, the mark never below them."""
    for task_id in record.tasks:
        if not 1 <= task_id <= MAX_TASK_ID:
            raise PlanNotStorable(record.name, f"task id {task_id} is out of range 1..{MAX_TASK_ID}")
    if not 0 <= record.high_water <= MAX_TASK_ID:
        raise PlanNotStorable(record.name, f"high-water mark {record.high_water} is out of range")
    return PlanRecord(
        name=record.name,
        archived=record.archived,
        plan_md=record.plan_md,
        high_water=max(record.high_water, *record.tasks, 0),
        tasks={i: bytes(record.tasks[i]) for i in sorted(record.tasks)},
    )


def _already(store: FolderTree, wanted: PlanRecord) -> bool:
    """True if `wanted` is stored exactly; PlanExists if another plan has its name (the
    same plan active where it is archived, or the other way, counts as another); False
    if the name is free."""
    other = False
    for archived in (wanted.archived, not wanted.archived):
        folder = (store.done if archived else store.todo) / wanted.name
        if not os.path.lexists(folder):
            continue
        if not folder.is_dir() or folder.is_symlink():
            raise PlanExists(wanted.name)  # a file or a link where the folder would go
        have = _export(store, wanted.name, archived)
        if have == wanted:
            return True
        other = other or have is not None
    if other:
        raise PlanExists(wanted.name)
    return False
