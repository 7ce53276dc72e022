"""Crash-safe file writes: temp file in the same folder, fsync, rename, fsync the folder.

A reader sees the old bytes or the new bytes, never a torn file; after a crash at
any instant every file is whole, and what was acknowledged (written before the
tool answered) survives because both the file and its folder entry were synced.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def temp_name(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")


def is_temp(name: str) -> bool:
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_synced(path: Path, data: bytes) -> None:
    """Write a new file (must not exist) and fsync it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_many(files: Iterable[tuple[Path, bytes]]) -> None:
    """Atomically replace each file; one folder sync per folder at the end.

    All temp files are written and synced before the first rename, so a failure
    while writing (full disk, read-only folder) leaves every target as it was.
    """
    staged: list[tuple[Path, Path]] = []
    try:
        for target, data in files:
            tmp = temp_name(target)
            staged.append((tmp, target))
            write_synced(tmp, data)
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    folders: set[Path] = set()
    for done, (tmp, target) in enumerate(staged):
        try:
            os.replace(tmp, target)
        except OSError as e:
            for left, _ in staged[done:]:
                with contextlib.suppress(OSError):
                    os.unlink(left)
            if done:
                with contextlib.suppress(OSError):
                    fsync_dir(target.parent)  # what was replaced stays replaced
                raise PartialWrite(e, [t for _, t in staged[:done]]) from e
            raise
        folders.add(target.parent)
    for folder in folders:
        fsync_dir(folder)


class PartialWrite(OSError):
    """Some targets were replaced before a rename failed (e.g. a folder in a file's place)."""

    def __init__(self, cause: OSError, replaced: list[Path]) -> None:
        super().__init__(cause.errno, cause.strerror)
        self.replaced = replaced


def remove_synced(paths: Iterable[Path]) -> None:
    folders: set[Path] = set()
    for p in paths:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(p)
        folders.add(p.parent)
    for folder in folders:
        fsync_dir(folder)
