"""The file store: the contract's on-disk layout, written crash-safely under a lock.

<root>/todo/<YYYY-MM-DD-slug>/plan.md, task_<N>.json, .highwatermark, .lock
<root>/done/<...same shape...>
<root>/.gitignore                        what git should leave out (written once, never overwritten)
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ... import history
from ...caller import NOBODY
from ...errors import (
    ArchiveExists,
    PlanArchived,
    PlanBusy,
    PlanningError,
    PlanNotFound,
    StorageError,
)
from ...fileio import atomic
from ...fileio.regular import MAX_PLAN_MD_BYTES, UnreadableFile, read_regular
from ...models import PlanSnapshot, PlanSummary, Task
from ...names import check_plan_name, claim_plan_name
from ...store import DEFAULT_LOCK_TIMEOUT, PlanArchiveCheck, PlanRecord, PlanVersion
from ..staging import plan_snapshot
from ..views import KeptViews
from . import copying, feed, historylog, historyread
from .foldercache import FolderCache
from .layout import check_creatable, ensure_writable, is_real_dir, list_plans, make_layout, root_mistake
from .merge.mergefixup import take_notes
from .planlock import LockTimeout, LockUnavailable, plan_lock
from .stagedfolder import STAGING_PREFIX, staged_plan_folder
from .taskfiles import LOCK, PLAN_MD, TASK_FILE
from .taskload import load_task
from .txn import FileTransaction, folder_view


class FileStore:
    """Plans as folders, tasks as JSON files (see the module docstring)."""

    def __init__(self, root: Path | str, lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> None:
        self.root = Path(root).absolute()
        self.todo = self.root / "todo"
        self.done = self.root / "done"
        self.lock_timeout = lock_timeout
        self.cache = FolderCache()
        # Each plan's last view, moved on by what changed (stores/views.py); bounded: a view
        # dropped is derived in full on its next read.
        self._views = KeptViews()  # moved under the cache's lock (see view())

    # -- setup ---------------------------------------------------------------

    def describe(self) -> str:
        return str(self.root)

    def prepare(self) -> None:
        """A root already there gets its layout; a root not there yet is only checked to be
        creatable and is made by the first plan written, so a client that merely connects
        (a health check) leaves nothing in the project."""
        if os.path.lexists(self.root):
            self.ensure_writable()
            return
        check_creatable(self.root)

    def close(self) -> None:
        self.cache.close()

    def ensure_writable(self) -> None:
        """Create the layout; raise StorageError if the root cannot be written."""
        ensure_writable(self.root)

    def make_layout(self) -> None:
        """The root's layout, made by whoever writes first (serving, the first plan, a copy):
        todo/, done/ and the .gitignore that keeps one machine's files out of git (written
        once: the user's own edits stay). OSError as the file system raises it."""
        make_layout(self.root)

    def root_mistake(self, *, creating: bool) -> str | None:
        """See PlanFolders.root_mistake. A root with todo/ or done/ is a planning folder,
        whatever else it holds; an empty or missing one is a new planning folder."""
        return root_mistake(self.root, creating=creating)

    # -- plan folders ----------------------------------------------------------

    def _list(self, folder: Path) -> list[str]:
        return list_plans(folder)

    def active_plans(self) -> list[str]:
        return self._list(self.todo)

    def archived_plans(self) -> list[str]:
        return self._list(self.done)

    def _folder(self, name: str) -> tuple[Path, bool]:
        check_plan_name(name)
        for folder, archived in ((self.todo, False), (self.done, True)):
            if is_real_dir(os.path.join(folder, name)):  # every call names its plan: one lstat, no Path
                return folder / name, archived
        raise PlanNotFound(name, self.active_plans())

    def is_archived(self, name: str) -> bool:
        return self._folder(name)[1]

    def location(self, name: str) -> str:
        return f"{self.done.name if self.is_archived(name) else self.todo.name}/{name}"

    def plan_folder(self, name: str) -> Path:
        return self._folder(name)[0]

    def title(self, name: str) -> str:
        return self.cache.title(self._folder(name)[0])

    def plan_versions(self) -> dict[str, PlanVersion]:
        versions: dict[str, PlanVersion] = {}
        for folder, archived in ((self.todo, False), (self.done, True)):
            for name in self._list(folder):
                with contextlib.suppress(OSError):
                    st = (folder / name).stat()
                    versions[name] = PlanVersion(archived, (st.st_mtime_ns, st.st_ino))
        return versions

    def changes(self, stop: threading.Event, wait: float) -> Iterator[set[str]]:
        """The OS tells of every change to a plan folder (inotify; FSEvents on macOS), within
        BURST_QUIET s of the last event of a burst; while nothing changes the feed only
        wakes to look at `stop` (feed.py). A plan file edited in place moves no folder
        version: the names come from the paths."""
        return feed.changes(self, stop, wait)

    def plans_of(self, paths: Iterable[str]) -> set[str]:
        names: set[str] = set()
        for p in paths:
            parts = Path(p).relative_to(self.root).parts if p.startswith(str(self.root)) else ()
            if len(parts) < 2 or parts[0] not in (self.todo.name, self.done.name):
                continue
            if len(parts) == 2 or parts[2] == PLAN_MD or TASK_FILE.fullmatch(parts[2]):
                names.add(parts[1])
        return names

    # -- reading ----------------------------------------------------------------

    def read_plan_md(self, name: str) -> str:
        path, _ = self._folder(name)
        try:
            raw = read_regular(path / PLAN_MD, MAX_PLAN_MD_BYTES, "plan.md")
        except FileNotFoundError:
            return f"# {name}\n\n(plan.md is missing from this plan folder)\n"
        except OSError as e:
            return f"# {name}\n\n(plan.md cannot be read: {e.strerror})\n"
        except UnreadableFile as e:  # a FIFO, a device, or far bigger than PlanCreate writes
            return f"# {name}\n\n(plan.md cannot be read: {e.reason})\n"
        return raw.decode("utf-8", errors="replace")

    def snapshot(self, name: str) -> PlanSnapshot:
        path, archived = self._folder(name)
        return self._snapshot(path, archived)

    def view(self, name: str) -> PlanSnapshot:
        """Like snapshot(), without copying every task: the tasks are shared with the
        cache and must not be changed. For queries over big plans."""
        path, archived = self._folder(name)
        return folder_view(self.cache, self._views, path, archived)

    def summary(self, name: str) -> PlanSummary:
        """Progress and current task, without copying every task as snapshot() does."""
        return self.view(name).summary()

    def _snapshot(self, path: Path, archived: bool, *, copy: bool = True) -> PlanSnapshot:
        cached, corrupt = self.cache.scan(path)
        title = self.cache.title(path)
        tasks = {i: t.clone() if copy else t for i, t in sorted(cached.items())}
        return plan_snapshot(path.name, title, archived, tasks, corrupt)

    def get_task(self, name: str, task_id: int) -> Task:
        path, _ = self._folder(name)
        return load_task(path, task_id)

    # -- writing ------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self, name: str, by: str = NOBODY) -> Iterator[FileTransaction]:
        path, archived = self._folder(name)
        if archived:
            raise PlanArchived(name)
        # The other writers' changes are read into the cache before the lock is asked for, so
        # that under it only those made while we waited are left to read. Only a warm-up: what
        # the transaction reads under the lock decides, and says what went wrong.
        with contextlib.suppress(PlanningError, OSError):
            folder_view(self.cache, self._views, path, False)
        try:
            with plan_lock(path / LOCK, self.lock_timeout):
                # The plan may have been archived while we waited for its lock.
                if not is_real_dir(os.fspath(path)):
                    raise PlanArchived(name) if (self.done / name).is_dir() else PlanNotFound(name)
                seq = historylog.settle(os.fspath(path))  # a write a crash interrupted is finished first
                txn = FileTransaction(name, path, self.cache, self._views, by, seq)
                yield txn
                txn.commit()
        except LockTimeout:
            raise PlanBusy(name, self.lock_timeout) from None
        except LockUnavailable as e:
            if isinstance(e.error, FileNotFoundError):  # archived or removed meanwhile
                raise PlanArchived(name) if (self.done / name).is_dir() else PlanNotFound(name) from None
            raise StorageError(f"the lock file {name}/{LOCK}", str(e)) from None  # a symlink, read-only

    def create_plan(self, date: str, slug: str, plan_md: str, tasks: list[Task], by: str = NOBODY) -> str:
        """Build the folder under a hidden temp name, then rename it into place."""
        try:
            if not self.todo.is_dir():  # the first plan in a root that prepare left to be made
                self.make_layout()
        except OSError as e:
            raise StorageError(f"the plan folder {self.todo}", e.strerror or str(e)) from None
        docs = {t.id: t.to_json().encode() for t in tasks}
        try:
            first_log = historylog.first_log(history.plan_created(len(tasks), by))
            with staged_plan_folder(self.todo, plan_md, docs, max(docs, default=0), first_log) as staging:
                name = claim_plan_name(date, slug, lambda name: self._move_in(staging, name))
            atomic.fsync_dir(self.todo)
            return name
        except OSError as e:
            raise StorageError(f"the plan {date}-{slug}", e.strerror or str(e)) from None

    def _move_in(self, staging: Path, name: str) -> bool:
        """Rename the staged plan folder to todo/<name>; False when a plan has the name."""
        if (self.done / name).exists():
            return False
        try:
            os.rename(staging, self.todo / name)
        except OSError as e:
            if e.errno in (errno.EEXIST, errno.ENOTEMPTY):
                return False
            raise
        return True

    def archive(self, name: str, check: PlanArchiveCheck, by: str = NOBODY) -> str:
        with self.transaction(name, by) as txn:
            check(txn.snapshot())
            target = self.done / name
            if target.exists():
                raise ArchiveExists(name)
            try:
                self.done.mkdir(parents=True, exist_ok=True)
                historylog.log_archive(os.fspath(txn.path), txn.seq, history.archived(by))
                os.rename(txn.path, target)
                self.cache.forget(txn.path)
                atomic.fsync_dir(self.todo)
                atomic.fsync_dir(self.done)
            except OSError as e:
                raise StorageError(f"the plan {name}", e.strerror or str(e)) from None
        return name

    def clean_staging(self, older_than: float = 3600.0) -> int:
        """Remove PlanCreate staging folders a crashed writer left in todo/. Only old
        ones: a young one may be another process's PlanCreate in progress."""
        removed = 0
        cutoff = time.time() - older_than
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.todo):
                stale = entry.name.startswith(STAGING_PREFIX) and entry.is_dir(follow_symlinks=False)
                if stale and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    shutil.rmtree(entry.path, ignore_errors=True)
                    removed += 1
        return removed

    def recover(self, by: str = NOBODY) -> list[str]:
        """After a crash: drop abandoned PlanCreate staging folders and temp files, drop
        links to tasks that have no file, mirror blocks from blockedBy; and what a git merge
        changed (renumbered ids), once. Never fatal."""
        lines: list[str] = []
        self.clean_staging()
        for name in self.active_plans():
            try:
                repaired = self.repair(name, by)
            except (PlanningError, OSError) as e:
                lines.append(f"could not check plan {name}: {e}")
                continue
            if repaired.dropped:
                links = "; ".join(f"#{t} -> {', '.join(f'#{m}' for m in ms)}" for t, ms in repaired.dropped.items())
                lines.append(f"plan {name}: dropped links to tasks that have no file: {links}")
            if repaired.blocks:
                lines.append(f"plan {name}: repaired blocks of tasks {repaired.blocks}")
            lines += take_notes(self.todo / name)  # what a git merge changed, said once
        return lines

    def export_plans(self) -> Iterator[PlanRecord]:
        return copying.export_plans(self)

    def import_plan(self, record: PlanRecord) -> bool:
        return copying.import_plan(self, record)

    # -- history (historyread.py) -------------------------------------------------

    def task_events(self, name: str, task_id: int, limit: int) -> list[history.Logged]:
        path, archived = self._folder(name)
        return historyread.task_events(name, os.fspath(path), task_id, archived=archived, limit=limit)

    def plan_events(self, name: str, limit: int, cursor: str | None = None) -> tuple[list[history.Logged], str | None]:
        path, archived = self._folder(name)
        return historyread.page(name, os.fspath(path), archived=archived, limit=limit, cursor=cursor)

    def events_since(self, since: str, limit: int) -> list[history.Logged]:
        return historyread.since_all(os.fspath(self.todo), self.active_plans(), since, limit)

    def repair(self, name: str, by: str = NOBODY) -> Repair:
        """After a crash or a hand edit: clean temp files, drop links to tasks that have no
        file (an unreadable file is not missing: links to it stay), and rewrite `blocks`
        lists that disagree with `blockedBy` (the source of truth)."""
        done = Repair()
        with self.transaction(name, by) as txn:
            for entry in os.scandir(txn.path):
                if atomic.is_temp(entry.name) and entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)
            # The files as they are and the plan as derived from them, both read-only views of
            # the cache (up to date: we hold the lock); a task is copied only to be rewritten.
            files, _ = self.cache.scan(txn.path)
            snap = self._snapshot(txn.path, archived=False, copy=False)
            for task_id, derived in snap.tasks.items():
                stored = files[task_id]
                linked = {*stored.blocked_by, *stored.blocks}
                gone = sorted(i for i in linked if i not in snap.tasks and not txn.exists(i))
                if gone:
                    done.dropped[task_id] = gone
                elif sorted(stored.blocks) != derived.blocks:
                    done.blocks.append(task_id)
                if gone or sorted(stored.blocks) != derived.blocks:
                    fixed = stored.clone()
                    fixed.blocked_by = [b for b in stored.blocked_by if b not in gone]
                    fixed.blocks = list(derived.blocks)
                    txn.put(fixed)
        return done


@dataclass
class Repair:
    """What FileStore.repair rewrote."""

    blocks: list[int] = field(default_factory=list)  # tasks whose `blocks` was re-mirrored
    dropped: dict[int, list[int]] = field(default_factory=dict)  # task -> missing ids it named

    @property
    def rewritten(self) -> list[int]:
        return sorted({*self.blocks, *self.dropped})
