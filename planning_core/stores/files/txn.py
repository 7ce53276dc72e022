"""The file store's PlanTransaction: changes staged under the plan's lock, then written
in the order that no crash can turn into a link to a missing task (the mark, new task
files, changed neighbours, removals), each file replaced whole and synced."""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import PartialWriteError, StorageError, TaskIdsExhausted
from ...fileio import atomic
from ...fileio.regular import MAX_HIGHWATERMARK_BYTES, UnreadableFile, read_regular
from ...models import PlanSnapshot, Task, TaskStatus
from ...names import MAX_TASK_ID
from ...taskdoc import task_filename
from ..staging import CommittedPlan, StagedTransaction
from ..views import KeptViews
from . import historylog
from .foldercache import FolderCache
from .taskfiles import HIGHWATERMARK, TASK_FILE
from .taskload import load_task


def folder_view(cache: FolderCache, views: KeptViews, path: Path, archived: bool) -> PlanSnapshot:
    """The plan folder's view, kept by `cache` per change: its tasks are shared with the
    cache and must not be changed."""

    def make() -> PlanSnapshot:  # run under the cache's lock: one thread at a time moves a view
        cached, corrupt = cache.scan(path)
        return views.of(path).view(path.name, cache.title(path), archived, cached, corrupt)

    return cache.memo(path, f"view:{archived}", make)


class FileTransaction(StagedTransaction):
    """The PlanTransaction of the file store. Reads are of the plan as it is: we hold the
    lock, and the cache reads every change first (a folder it cannot watch: the file itself)."""

    def __init__(self, name: str, path: Path, cache: FolderCache, views: KeptViews, by: str, seq: int) -> None:
        super().__init__(name, by)
        self.path = path
        self.seq = seq  # the number its history entry takes (historylog.settle, under the same lock)
        self._cache = cache  # the store's parsed files, brought up to date by each scan
        self._views = views  # the store's views, shared by its reads
        self._high: int | None = None
        self._mark_covered = False  # the files on disk reach the mark (next_id): its data need not be synced
        self._issued: set[int] = set()  # ids from next_id: their files must not exist yet

    def _shared_view(self) -> PlanSnapshot:
        # Under the lock the store's view is the plan as it is (its cache reads every change first).
        return folder_view(self._cache, self._views, self.path, False)

    def _committed(self, task_id: int) -> Task:
        kept = self._cache.task(self.path, task_id)
        return kept.clone() if kept is not None else load_task(self.path, task_id)

    def _committed_exists(self, task_id: int) -> bool:
        return os.path.lexists(os.path.join(self.path, task_filename(task_id)))

    def next_id(self) -> int:
        if self._high is None:
            self._high = self._read_mark()
            # The old mark's own task file is there (synced when written): the ids on disk
            # reach the mark, so a power cut that empties the new mark loses no used id.
            self._mark_covered = self._high is not None and self._committed_exists(self._high)
        candidate = (self._high or 0) + 1
        if self._high is None or self.exists(candidate):
            # The high-water mark is gone or behind the files (hand edit, copied folder, a
            # power cut that emptied it): never reuse an id, so take the highest id on disk.
            candidate = max([candidate - 1, *self._ids_on_disk(), *self._staged]) + 1
        if candidate > MAX_TASK_ID:
            # task_<N>.json has at most 9 digits: a bigger id would be invisible to every
            # read, and the next create would overwrite it. Refuse before anything is staged.
            raise TaskIdsExhausted(self.name, MAX_TASK_ID)
        self._high = candidate
        self._issued.add(candidate)
        return candidate

    def _read_mark(self) -> int | None:
        """The high-water mark, or None when it is missing, unreadable or out of range (the
        files are then all we know). A FIFO or device in its place is never opened."""
        try:
            mark = int(read_regular(self.path / HIGHWATERMARK, MAX_HIGHWATERMARK_BYTES).strip())
        except (OSError, ValueError, UnreadableFile):
            return None
        return mark if 0 <= mark <= MAX_TASK_ID else None

    def _ids_on_disk(self) -> list[int]:
        """The ids of the task files in the folder (one scan of it). A name beyond the limit
        was never issued (it is reported as unreadable)."""
        names = (TASK_FILE.fullmatch(n) for n in os.listdir(self.path))
        return [i for m in names if m and (i := int(m.group(1))) <= MAX_TASK_ID]

    def _committed_plan(self) -> CommittedPlan:
        cached, corrupt = self._cache.scan(self.path)
        return CommittedPlan(self._cache.title(self.path), {i: t.clone() for i, t in sorted(cached.items())}, corrupt)

    def all_completed(self) -> bool:
        """Is every task completed (staged changes included)? Stops at the first that is
        not, so completing a task in a big plan reads little until the plan is nearly done."""
        for t in self._staged.values():
            if t is not None and t.status is not TaskStatus.COMPLETED:
                return False
        for _, hit in self._cache.entries(self.path):
            value = hit.value
            if not isinstance(value, Task):
                return False  # an unreadable task is not known to be done
            if value.id not in self._staged and value.status is not TaskStatus.COMPLETED:
                return False
        return True

    def commit(self) -> None:
        # Order matters for a crash between two renames: a new task's file goes before its
        # neighbours' (which name it), and a deleted task's file goes after theirs (they stop
        # naming it first), so no crash point leaves a link to a missing task.
        order = sorted(self._staged, key=lambda i: i not in self._issued)
        folder = os.fspath(self.path)
        self._refuse_taken_ids(order, folder)
        removals = [os.path.join(folder, task_filename(i)) for i, t in self._staged.items() if t is None]
        try:
            self._write(self._writes(order, folder), removals)
        except atomic.PartialWrite as e:
            tasks = [n for p in e.replaced if (n := os.path.basename(p)) != HIGHWATERMARK]
            if not tasks:  # only the mark moved on: an id is burnt, no task changed
                raise StorageError(f"plan {self.name}", e.strerror or str(e)) from None
            raise PartialWriteError(self.name, ", ".join(tasks), e.strerror or str(e)) from None
        except OSError as e:
            raise StorageError(f"plan {self.name}", e.strerror or str(e)) from None
        self._staged.clear()
        self._issued.clear()

    def _refuse_taken_ids(self, order: list[int], folder: str) -> None:
        for i in order:
            if i in self._issued and os.path.lexists(os.path.join(folder, task_filename(i))):
                # Under the lock no writer of ours made it: never overwrite what is there.
                raise StorageError(f"plan {self.name}", f"{task_filename(i)} appeared for a new id")

    def _writes(self, order: list[int], folder: str) -> list[tuple[str, bytes]]:
        writes = [
            (os.path.join(folder, task_filename(i)), t.to_json().encode()) for i in order if (t := self._staged[i])
        ]
        removed = [i for i, t in self._staged.items() if t is None]
        if removed:
            self._keep_mark_of(removed)
        if self._high is not None:
            # The mark goes first: if a later rename fails, an id is burnt, never reused.
            writes.insert(0, (os.path.join(folder, HIGHWATERMARK), f"{self._high}\n".encode()))
        return writes

    def _keep_mark_of(self, removed: list[int]) -> None:
        """A commit that removes the highest task file writes the mark, synced: from then on
        only the mark tells that its id was used."""
        kept = {i for i, t in self._staged.items() if t is not None}
        if max(removed) > max((set(self._ids_on_disk()) - set(removed)) | kept, default=0):
            self._high = max(self._read_mark() or 0, *removed, *kept)
            self._mark_covered = False

    def _write(self, writes: list[tuple[str, bytes]], removals: list[str]) -> None:
        entry = self.staged_entry()
        if entry is not None:  # the change and its history entry, as one (historylog.py)
            # A mark the files on disk cover needs no sync of its own (RELIABILITY.md).
            lazy = (os.path.join(os.fspath(self.path), HIGHWATERMARK),) if self._mark_covered else ()
            historylog.commit_logged(os.fspath(self.path), self.seq, entry, writes, removals, lazy)
            return
        if writes:
            atomic.replace_many(writes)
        if removals:
            atomic.remove_synced(removals)
