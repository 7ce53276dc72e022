"""A plan folder written whole before anyone sees it, for create_plan and import_plan:
built under a hidden staging name in todo/ (each file synced, then the folder), so that
one rename into place by the caller makes the plan appear complete, and a crash leaves
only a staging folder (clean_staging removes old ones)."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

from ...fileio import atomic
from ...taskdoc import task_filename
from . import historyread
from .taskfiles import HIGHWATERMARK, LOCK, PLAN_MD

STAGING_PREFIX = ".staging-"


@contextlib.contextmanager
def staged_plan_folder(
    todo: Path, plan_md: str, tasks: Mapping[int, bytes], high_water: int, history_log: bytes | None = None
) -> Iterator[Path]:
    """The staged folder (plan.md, a task_<N>.json per id, the high-water mark, the lock
    file, the plan's history log when there is one), removed when the block ends unless the
    caller renamed it away. Raises OSError."""
    staging = todo / f"{STAGING_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    try:
        staging.mkdir()
        atomic.write_synced(staging / PLAN_MD, plan_md.encode())
        for task_id, data in tasks.items():
            atomic.write_synced(staging / task_filename(task_id), data)
        atomic.write_synced(staging / HIGHWATERMARK, f"{high_water}\n".encode())
        atomic.write_synced(staging / LOCK, b"")
        if history_log:
            atomic.write_synced(staging / historyread.LOG, history_log)
        atomic.fsync_dir(staging)
        yield staging
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
