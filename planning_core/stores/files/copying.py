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
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

from ...errors import PlanBusy, PlanExists, StorageError
from ...names import MAX_TASK_ID, check_plan_name
from ...store import PlanRecord
from ...taskdoc import task_filename
from . import atomicfile
from .planlock import LockTimeout, LockUnavailable, plan_lock
from .regularfile import MAX_HIGHWATERMARK_BYTES, MAX_PLAN_MD_BYTES, UnreadableFile, read_regular
from .store import STAGING_PREFIX, FileStore  # store.py imports this module only when called
from .taskfiles import HIGHWATERMARK, LOCK, PLAN_MD, TASK_FILE, misnamed

# Bytes are copied, never parsed, so a task file bigger than the request path reads
# (taskfiles.MAX_TASK_FILE_BYTES) is still copied whole; this bound only keeps a stray
# huge file from filling memory. Bigger files, and anything that is not a regular file
# (a FIFO, a symlink), are left behind: the source store cannot read them either.
MAX_COPIED_TASK_BYTES = 64 * 1024 * 1024


def export_plans(store: FileStore) -> Iterator[PlanRecord]:
    """Every plan, active and archived, oldest first (names begin with their date)."""
    plans = sorted([(n, False) for n in store.active_plans()] + [(n, True) for n in store.archived_plans()])
    for name, archived in plans:
        record = _export(store, name, archived)
        if record is not None:
            yield record


def import_plan(store: FileStore, record: PlanRecord) -> bool:
    """Write the plan as recorded. False when a plan of that name is already stored exactly
    so (nothing is written); PlanExists when a different one is (nothing is written)."""
    name = check_plan_name(record.name)  # the name becomes a path: nothing else gets near one
    wanted = _normal(record)
    if _already(store, wanted):
        return False
    target = (store.done if record.archived else store.todo) / name
    try:
        for folder in (store.todo, store.done):
            folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StorageError(f"the plan folder {store.todo.parent}", e.strerror or str(e)) from None
    # Staging goes in todo/ even for an archived plan: clean_staging removes what a crash
    # leaves there, and todo/ and done/ share a file system (archive renames between them).
    staging = store.todo / f"{STAGING_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    try:
        staging.mkdir()
        atomicfile.write_synced(staging / PLAN_MD, wanted.plan_md.encode())
        for task_id, data in wanted.tasks.items():
            atomicfile.write_synced(staging / task_filename(task_id), data)
        atomicfile.write_synced(staging / HIGHWATERMARK, f"{wanted.high_water}\n".encode())
        atomicfile.write_synced(staging / LOCK, b"")
        atomicfile.fsync_dir(staging)
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
        atomicfile.fsync_dir(target.parent)
        if target.parent != store.todo:
            atomicfile.fsync_dir(store.todo)  # the staging entry left todo/
        return True
    except OSError as e:
        raise StorageError(f"the plan {name}", e.strerror or str(e)) from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


# -- reading one plan folder -------------------------------------------------------------


def _export(store: FileStore, name: str, archived: bool) -> PlanRecord | None:
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
        entries = list(os.scandir(folder))
    except OSError as e:
        raise StorageError(f"a copy of the plan {name} (cannot list {folder})", e.strerror or str(e)) from None
    tasks: dict[int, bytes] = {}
    on_disk = [0]
    for entry in entries:
        match = TASK_FILE.fullmatch(entry.name)
        if not match or (task_id := int(match.group(1))) > MAX_TASK_ID:
            continue
        on_disk.append(task_id)  # named like a task: its id counts as issued (as next_id counts it)
        if misnamed(entry.name, task_id) is not None:
            continue  # task_07.json is not task 7: only task_7.json is
        try:
            tasks[task_id] = read_regular(entry.path, MAX_COPIED_TASK_BYTES, "a copied task file")
        except (UnreadableFile, FileNotFoundError):
            continue
    high = max(_mark(folder), *on_disk)
    return PlanRecord(
        name=name, archived=archived, plan_md=_plan_md(folder), high_water=high, tasks=dict(sorted(tasks.items()))
    )


def _plan_md(folder: Path) -> str:
    """plan.md's text; empty when there is none or it cannot be read (nothing to copy)."""
    try:
        return read_regular(folder / PLAN_MD, MAX_PLAN_MD_BYTES, "plan.md").decode("utf-8", errors="replace")
    except (OSError, UnreadableFile):
        return ""


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
            raise StorageError(f"the plan {record.name}", f"task id {task_id} is out of range 1..{MAX_TASK_ID}")
    if not 0 <= record.high_water <= MAX_TASK_ID:
        raise StorageError(f"the plan {record.name}", f"high-water mark {record.high_water} is out of range")
    return PlanRecord(
        name=record.name,
        archived=record.archived,
        plan_md=record.plan_md,
        high_water=max(record.high_water, *record.tasks, 0),
        tasks={i: bytes(record.tasks[i]) for i in sorted(record.tasks)},
    )


def _already(store: FileStore, wanted: PlanRecord) -> bool:
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
