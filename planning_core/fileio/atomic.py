"""Crash-safe file writes: temp file in the same folder, fsync, rename, fsync the folder.

A reader sees the old bytes or the new bytes, never a torn file; after a crash at
any instant every file is whole, and what was acknowledged (written before the
tool answered) survives because both the file and its folder entry were synced.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable

TEMP_SUFFIX = ".tmp"

Target = str | os.PathLike[str]


def temp_name(target: Target) -> str:
    # Plain strings on the write path: pathlib costs more than the system calls it wraps here.
    # os.urandom is what secrets.token_hex reads, without loading secrets (random, base64) into
    # the Claude Code hook, which writes its state at every tool call.
    folder, name = os.path.split(os.fspath(target))
    return os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}{TEMP_SUFFIX}")


def is_temp(name: str) -> bool:
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def is_temp_of(name: str, target: str) -> bool:
    """`name` is of the shape temp_name() gives a file named `target` in its folder."""
    middle = name[len(target) + 2 : -len(TEMP_SUFFIX)].split(".") if name.startswith(f".{target}.") else []
    return is_temp(name) and len(middle) == 2 and middle[0].isdigit() and _is_hex(middle[1])


def _is_hex(text: str) -> bool:
    return bool(text) and all(c in "0123456789abcdef" for c in text)


def fsync_dir(folder: Target) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_synced(path: Target, data: bytes, dir_fd: int | None = None) -> os.stat_result:
    """Write a new file (must not exist) and fsync it (dir_fd: `path` is a name in that
    folder); its fstat once written."""
    return _write_new(path, data, dir_fd, sync=True)


def write_unsynced(path: Target, data: bytes) -> os.stat_result:
    """write_synced without the fsync: for a file whose loss in a power cut is harmless
    (after one, it may be there empty); its fstat once written."""
    return _write_new(path, data, None, sync=False)


def _write_new(path: Target, data: bytes, dir_fd: int | None, *, sync: bool) -> os.stat_result:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    fd = os.open(path, flags, 0o644) if dir_fd is None else os.open(path, flags, 0o644, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
        return os.fstat(fd)
    finally:
        os.close(fd)


def replace_many(files: Iterable[tuple[Target, bytes]]) -> None:
    """Atomically replace each file; one folder sync per folder at the end.

    All temp files are written and synced before the first rename, so a failure
    while writing (full disk, read-only folder) leaves every target as it was.
    """
    staged: list[tuple[str, Target]] = []
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
    folders: set[str] = set()
    for done, (tmp, target) in enumerate(staged):
        try:
            os.replace(tmp, target)
        except OSError as e:
            for left, _ in staged[done:]:
                with contextlib.suppress(OSError):
                    os.unlink(left)
            if done:
                with contextlib.suppress(OSError):
                    fsync_dir(os.path.dirname(os.fspath(target)))  # what was replaced stays replaced
                raise PartialWrite(e, [t for _, t in staged[:done]]) from e
            raise
        folders.add(os.path.dirname(tmp))
    for folder in folders:
        fsync_dir(folder)


def replace_in(dir_fd: int, name: str, data: bytes) -> None:
    """replace_many for one file named `name` in the open folder `dir_fd`: every step by
    the folder's descriptor, so no link on the way to the folder is ever followed."""
    tmp = temp_name(name)
    try:
        write_synced(tmp, data, dir_fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.fsync(dir_fd)


class PartialWrite(OSError):
    """Some targets were replaced before a rename failed (e.g. a folder in a file's place)."""

    def __init__(self, cause: OSError, replaced: list[Target]) -> None:
        super().__init__(cause.errno, cause.strerror)
        self.replaced = replaced


def remove_synced(paths: Iterable[Target]) -> None:
    folders: set[str] = set()
    for p in paths:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(p)
        folders.add(os.path.dirname(os.fspath(p)))
    for folder in folders:
        fsync_dir(folder)
