"""The index of plan folders: each task file parsed once, then kept up to date from what
changed, so a read of a plan whose files did not change touches none of them.

How the index learns of changes (by this process, another process, or a hand edit):

- Where inotify works (Linux, see fswatch), each folder is watched before it is first
  read, and every read first drains the event queue: the kernel queues an event inside
  the system call that changes a file (rename, unlink, write() in place, chmod), so
  every change that finished before the read is known, and only the files named are
  looked at again (one lstat, and a re-read where (inode, mtime, ctime, size) moved).
  Events on todo/ and done/ themselves tell a plan folder was replaced or removed.
- Elsewhere, or when a folder cannot be watched (no watches left, a queue overflow),
  the folder is read as before: one stat per file per read, a file re-read only when
  its (inode, mtime, ctime, size) changed.

Each change bumps the folder's generation; what is derived from the tasks (the sorted
snapshot, the summary) is kept per generation (`memo`), so it is rebuilt once per change,
not once per read.

What is kept per task is small (about 1 KB for a short task): the parsed Task made
compact (Task.kept), and the file's stat key packed into 32 bytes."""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ...errors import PlanNotFound, PlanUnreadable
from ...fileio.regular import UnreadableFile, read_regular
from ...models import CorruptFile, Task
from ...names import plan_title
from . import fswatch
from .taskfiles import PLAN_MD, TASK_FILE, misnamed
from .taskload import read_task

TITLE_BYTES = 4096  # the title is plan.md's first line; more is never read for it
T = TypeVar("T")
# (inode, mtime, ctime, size) in 32 bytes rather than a tuple of four ints (about 210).
_STAT_KEY = struct.Struct("<QqqQ")
StatKey = bytes | tuple[int, int, int, int]


def stat_key(st: os.stat_result) -> StatKey:
    """What tells a file changed: equal keys, same file content (as far as stat can tell)."""
    try:
        return _STAT_KEY.pack(st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
    except struct.error:  # a time past 2262 (a hand-set mtime): kept as the ints themselves
        return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)


@dataclass(slots=True)
class Cached:
    key: StatKey
    value: Task | CorruptFile


@dataclass
class FolderState:
    files: dict[str, Cached] = field(default_factory=dict)
    title: tuple[tuple[int, int, int], str] | None = None
    # Replaced, never changed in place, so a reader holding one is never disturbed.
    tasks: dict[int, Task] = field(default_factory=dict)
    corrupt: list[CorruptFile] = field(default_factory=list)
    watched: bool = False  # inotify reports every change: `dirty` is all that may differ
    dirty: set[str] = field(default_factory=set)
    generation: int = 0
    memo: dict[str, Any] = field(default_factory=dict)


@dataclass
class _FolderEdit:
    """Copies of a folder's parsed files, tasks and unreadable files, being changed."""

    files: dict[str, Cached]
    tasks: dict[int, Task]
    corrupt: list[CorruptFile]

    def put(self, name: str, old: Cached | None, hit: Cached | None) -> None:
        """File `name` now parses to `hit` (None: it is gone), where it parsed to `old`."""
        if hit is None:
            if old is not None:
                self._drop(old)
            self.files.pop(name, None)
            return
        self.files[name] = hit
        task = self._same_task(old, hit)
        if task is not None:
            self.tasks[task.id] = task  # in its place: the dict stays in id order
            return
        if old is not None:
            self._drop(old)
        if isinstance(hit.value, Task):
            self.tasks[hit.value.id] = hit.value
        else:
            self.corrupt.append(hit.value)
            self.corrupt.sort(key=lambda c: c.task_id)

    def _same_task(self, old: Cached | None, hit: Cached) -> Task | None:
        """hit's task, when it is a new version of the task old held."""
        if old is None:
            return None
        was, now = old.value, hit.value
        if isinstance(was, Task) and isinstance(now, Task) and was.id == now.id and self.tasks.get(was.id) is was:
            return now
        return None

    def _drop(self, old: Cached) -> None:
        if isinstance(old.value, Task):
            if self.tasks.get(old.value.id) is old.value:
                del self.tasks[old.value.id]
        else:
            self.corrupt = [c for c in self.corrupt if c is not old.value]


class FolderCache:
    """Parsed task files and titles per plan folder, shared by every read of one store.
    The tasks it hands out are its own: callers copy before changing them."""

    def __init__(self) -> None:
        self._folders: dict[Path, FolderState] = {}
        self._lock = threading.RLock()
        self._watcher: fswatch.Watcher | None = None

    @property
    def watching(self) -> bool:
        """Whether changes are learnt from the OS (else: a stat per file per read)."""
        return self._watcher is not None and self._watcher.available

    def close(self) -> None:
        with self._lock:
            if self._watcher is not None:
                self._watcher.close()
            self._watcher = None
            self._folders.clear()

    def forget(self, path: Path) -> None:
        with self._lock:
            self._folders.pop(path, None)
            if self._watcher is not None:
                self._watcher.unwatch(path)

    def _state(self, path: Path) -> FolderState:
        return self._folders.setdefault(path, FolderState())

    def _apply_events(self) -> None:
        if self._watcher is None:
            self._watcher = fswatch.Watcher()  # lazily: a store that never reads needs no instance
        for folder, names in self._watcher.drain().items():
            if folder == fswatch.OVERFLOW:  # events were lost: trust nothing kept
                for each in self._folders.values():
                    each.watched = False
                continue
            state = self._folders.get(folder)
            if state is not None:
                if fswatch.GONE in names:  # moved (archived) or removed: read it afresh if asked
                    self._folders.pop(folder, None)
                else:
                    state.dirty |= names
            for name in names:  # todo/ or done/: a plan folder under this name came or went
                child = folder / name
                if name and child in self._folders:
                    self.forget(child)

    def generation(self, path: Path) -> int:
        """Bumped whenever a task file or plan.md of the folder changed. Brings it up to date."""
        with self._lock:
            return self._sync(path).generation

    def memo(self, path: Path, key: str, make: Callable[[], T]) -> T:
        """`make()` (which reads the folder through this cache), kept until the folder's
        next change. Kept only where the folder is watched: unwatched, a change to plan.md
        is seen only by title(), so nothing derived from it may be kept."""
        with self._lock:
            state = self._sync(path)
            if key in state.memo:
                kept: T = state.memo[key]
                return kept
            generation = state.generation
            value = make()
            if state.watched and self._folders.get(path) is state and state.generation == generation:
                state.memo[key] = value  # only if nothing changed while it was made
            return value

    def title(self, path: Path) -> str:
        with self._lock:
            self._apply_events()
            cache = self._state(path)
            if cache.watched and cache.title is not None and PLAN_MD not in cache.dirty:
                return cache.title[1]  # plan.md has not changed since it was read
            cache.dirty.discard(PLAN_MD)
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
        title = plan_title(head.decode("utf-8", errors="replace"), path.name)
        with self._lock:
            cache.title = (key, title)
            cache.memo.clear()
        return title

    def scan(self, path: Path) -> tuple[dict[int, Task], list[CorruptFile]]:
        """Every task of the folder (by id) and its unreadable files (by id), up to date.
        Both are the cache's own and never changed afterwards: callers must not change them."""
        with self._lock:
            state = self._sync(path)
            return state.tasks, state.corrupt

    def task(self, path: Path, task_id: int) -> Task | None:
        """Task `task_id` as its file holds it now, where the folder is watched (every change
        that finished before this call is known: the module docstring); None where it is not
        watched or the task is not a readable file (the caller reads the file itself)."""
        with self._lock:
            state = self._sync(path)
            return state.tasks.get(task_id) if state.watched else None

    def entries(self, path: Path) -> Iterator[tuple[str, Cached]]:
        """(file name, cached value) for each task file, up to date."""
        with self._lock:
            files = list(self._sync(path).files.items())
        yield from files

    # -- keeping the index up to date -------------------------------------------------

    def _sync(self, path: Path) -> FolderState:
        self._apply_events()
        state = self._folders.get(path)
        if state is not None and state.watched:
            if state.dirty:
                self._refresh(path, state)
            return state
        assert self._watcher is not None
        state = self._state(path)
        # Watch before reading, so a change made during the read is reported, not missed.
        watched = self._watcher.watch(path.parent, follow=True) and self._watcher.watch(path)
        self._full_scan(path, state)
        state.watched = watched
        # plan.md may have changed before the watch began: title() looks once more.
        state.dirty = {PLAN_MD}
        return state

    def _full_scan(self, path: Path, state: FolderState) -> None:
        try:
            # Names only, not a list of scandir entries: each of those keeps its stat (about
            # 700 bytes), 7 MB at once for 10,000 files. The stat is one lstat either way.
            names = [n for n in os.listdir(path) if TASK_FILE.fullmatch(n)]
        except FileNotFoundError:  # archived or removed (by anyone): forget what we parsed
            self.forget(path)
            raise PlanNotFound(path.name) from None
        except OSError as e:
            self.forget(path)
            raise PlanUnreadable(path.name, e.strerror or str(e)) from None
        seen: dict[str, Cached] = {}
        changed = len(names) != len(state.files)
        for name in names:
            try:
                st = os.lstat(os.path.join(path, name))
            except FileNotFoundError:
                continue
            hit = self._load(path, name, st, state.files.get(name))
            if hit is not None:
                changed = changed or state.files.get(name) is not hit
                seen[name] = hit
        changed = changed or seen.keys() != state.files.keys()
        if changed or state.generation == 0:
            state.files = seen
            self._rebuild(state)

    def _refresh(self, path: Path, state: FolderState) -> None:
        """Look again only at the files the watcher named."""
        names = [n for n in state.dirty if TASK_FILE.fullmatch(n)]
        if PLAN_MD in state.dirty:
            state.memo.clear()  # the title is part of what is kept; title() re-reads it
        state.dirty = {PLAN_MD} & state.dirty
        edit: _FolderEdit | None = None
        for name in names:
            old = state.files.get(name)
            try:
                st = os.lstat(os.path.join(path, name))
            except FileNotFoundError:
                hit = None
            except OSError:  # the folder itself went: read it afresh next time
                state.watched = False
                return
            else:
                hit = self._load(path, name, st, old)
            if hit is old:
                continue
            if edit is None:  # copy on write: readers holding the old ones are not disturbed
                edit = _FolderEdit(dict(state.files), dict(state.tasks), list(state.corrupt))
            edit.put(name, old, hit)
        if edit is not None:
            state.files, state.tasks, state.corrupt = edit.files, edit.tasks, edit.corrupt
            state.generation += 1
            state.memo = {}

    @staticmethod
    def _load(path: Path, name: str, st: os.stat_result, old: Cached | None) -> Cached | None:
        key = stat_key(st)
        if old is not None and old.key == key:
            return old
        m = TASK_FILE.fullmatch(name)
        assert m is not None
        task_id = int(m.group(1))
        try:
            # A str path, not path / name: pathlib interns every name it parses, and that
            # table (1.9 MB for 10,000 files) stays as big as the plan ever was.
            loaded = misnamed(name, task_id) or read_task(os.path.join(path, name), task_id, st)
        except FileNotFoundError:
            return None
        value = loaded.kept() if isinstance(loaded, Task) else CorruptFile(task_id=task_id, file=name, reason=loaded)
        return Cached(key, value)

    @staticmethod
    def _rebuild(state: FolderState) -> None:
        """New task and corrupt collections from the files (a dict build, no file read)."""
        tasks: dict[int, Task] = {}
        corrupt: list[CorruptFile] = []
        for hit in state.files.values():
            if isinstance(hit.value, Task):
                tasks[hit.value.id] = hit.value
            else:
                corrupt.append(hit.value)
        corrupt.sort(key=lambda c: c.task_id)
        state.tasks, state.corrupt = tasks, corrupt
        state.generation += 1
        state.memo = {}
