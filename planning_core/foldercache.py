"""Reading plan folders fast and safely: each task file is parsed once and then reused
until its (inode, mtime, ctime, size) changes. Every write replaces a file by rename, which gives
it a new inode, so a changed task is always seen; the check costs one stat per file."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import PlanNotFound, PlanUnreadable
from .models import CorruptFile, Task
from .regularfile import UnreadableFile, read_regular
from .taskfiles import PLAN_MD, TASK_FILE, misnamed, read_task

TITLE_BYTES = 4096  # the title is plan.md's first line; more is never read for it


@dataclass
class Cached:
    key: tuple[int, int, int, int]
    value: Task | CorruptFile


@dataclass
class FolderState:
    files: dict[str, Cached] = field(default_factory=dict)
    title: tuple[tuple[int, int, int], str] | None = None


class FolderCache:
    """Parsed task files and titles per plan folder, shared by every read of one store.
    The tasks it hands out are its own: callers copy before changing them."""

    def __init__(self) -> None:
        self._folders: dict[Path, FolderState] = {}

    def forget(self, path: Path) -> None:
        self._folders.pop(path, None)

    def _state(self, path: Path) -> FolderState:
        return self._folders.setdefault(path, FolderState())

    def title(self, path: Path) -> str:
        cache = self._state(path)
        try:
            st = os.lstat(path / PLAN_MD)
        except OSError:
            return path.name
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        if cache.title and cache.title[0] == key:
            return cache.title[1]
        try:
            # The title is on the first line: a bounded read, never of a FIFO or device.
            head = read_regular(path / PLAN_MD, TITLE_BYTES, "plan.md", st, head=True)
        except (OSError, UnreadableFile):  # a folder, FIFO or unreadable file where plan.md should be
            return path.name
        first = head.decode("utf-8", errors="replace").partition("\n")[0][:1000]
        title = first[2:].strip() if first.startswith("# ") else path.name
        cache.title = (key, title)
        return title

    def scan(self, path: Path) -> tuple[dict[int, Task], list[CorruptFile]]:
        """Every task file of the folder, re-read only where (inode, mtime, size) changed.
        The tasks returned are the cache's own: callers must not change them."""
        cache = self._state(path)
        seen: dict[str, Cached] = {}
        tasks: dict[int, Task] = {}
        corrupt: list[CorruptFile] = []
        for name, hit in self.entries(path):
            seen[name] = hit
            if isinstance(hit.value, Task):
                tasks[hit.value.id] = hit.value
            else:
                corrupt.append(hit.value)
        cache.files = seen
        corrupt.sort(key=lambda c: c.task_id)
        return tasks, corrupt

    def entries(self, path: Path) -> Iterator[tuple[str, Cached]]:
        """(file name, cached value) for each task file, lazily, refreshing the cache."""
        cache = self._state(path)
        try:
            entries = list(os.scandir(path))
        except FileNotFoundError:  # archived or removed (by anyone): forget what we parsed
            self.forget(path)
            raise PlanNotFound(path.name) from None
        except OSError as e:
            raise PlanUnreadable(path.name, e.strerror or str(e)) from None
        for entry in entries:
            m = TASK_FILE.fullmatch(entry.name)
            if not m:
                continue
            task_id = int(m.group(1))
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            key = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
            hit = cache.files.get(entry.name)
            if hit is None or hit.key != key:
                try:
                    loaded = misnamed(entry.name, task_id) or read_task(Path(entry.path), task_id, st)
                except FileNotFoundError:
                    continue
                value = loaded if isinstance(loaded, Task) else CorruptFile(
                    task_id=task_id, file=entry.name, reason=loaded
                )
                hit = cache.files[entry.name] = Cached(key, value)
            yield entry.name, hit

