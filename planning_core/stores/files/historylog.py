"""The file store's history: one append-only log per plan folder, in bounded segments.

`history.jsonl` holds one JSON line per transaction that changed the plan (an *entry*:
`seq`, `at`, `by`, `events`), plus markers (`{"seq": N, "done": 1}` or `"void"`). When it
passes SEGMENT_BYTES it becomes `history.1.jsonl` (the older ones shift up; past
SEGMENTS - 1 the oldest is dropped), so a plan's log never exceeds about
SEGMENT_BYTES * SEGMENTS bytes however long it lives.

The entry is the write's commit point (see `commit_logged`): the new task files are
written and synced under temp names first (a create's `.highwatermark` unsynced,
txn.py), then the entry, naming those temp files and the files to remove, is appended and
synced, then the renames and removals run (one folder fsync for both), then a `done`
marker is appended. A crash before the entry is durable changed no task file (the temp
files are cleaned as always); a crash after it is rolled forward by the next writer
of the plan (`settle`, under the plan's lock, before it reads anything) and by every
server start (recover): the temp files named are renamed into place, the removals made.

A repository can commit a log (whatever .gitignore says), so its last entry is never taken
on trust: the entry names each file with its *stamp* (inode and nanosecond modification
time) as the writer made it (a temp file) or saw it (a file to remove) on this machine, and
the roll forward renames a temp file, or removes a file, only if it is a regular file in
this folder of the shape we make carrying exactly that stamp. A checkout creates its files
with stamps no one can know in advance, so a committed entry matches nothing and is voided;
a rename already made is known by its target carrying the temp file's stamp.
So the log and the tasks agree at every crash point, and an acknowledged write (the tool
answers after the renames) always has its entry. An archive's entry is written before the
folder moves to done/; it counts only where the folder is in done/.

The log is one machine's record: it is kept out of git (the store's .gitignore and
git-setup), as a lock file is, and copied by `planning-mcp copy`.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Collection
from typing import Any

from ...fileio import atomic
from ...history import Entry
from .historyread import LOG, SEGMENT_BYTES, SEGMENT_NAMES, last_record
from .taskfiles import HIGHWATERMARK, TASK_FILE

_APPEND = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _dumps(value: dict[str, Any]) -> bytes:
    return (json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


# -- writing ------------------------------------------------------------------------------


def _rotate(folder: str) -> None:
    """Shift every segment up by one (the oldest is dropped) and start a new one. Each
    rename is atomic: a crash between two leaves a gap in the numbers, which readers skip."""
    names = [os.path.join(folder, n) for n in SEGMENT_NAMES]
    for older, newer in zip(reversed(names[1:]), reversed(names[:-1]), strict=True):
        with contextlib.suppress(FileNotFoundError):
            os.replace(newer, older)


def _append(folder: str, record: dict[str, Any], *, sync: bool, rotate: bool = False) -> int | None:
    """Append one line to the current segment. A torn last line (a power loss mid-append)
    is ended first, so it never swallows this one. Returns the segment's size before, or
    None when the segment is new (made now, or by a rotation)."""
    path = os.path.join(folder, LOG)
    line = _dumps(record)
    rotated = False
    if rotate:
        with contextlib.suppress(FileNotFoundError):
            if os.lstat(path).st_size + len(line) > SEGMENT_BYTES:
                _rotate(folder)
                rotated = True
    created = rotated or not os.path.lexists(path)
    fd = os.open(path, _APPEND, 0o644)
    try:
        size = os.fstat(fd).st_size
        before = None if created else size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    if sync and created:  # a new segment's name must survive a power loss too
        atomic.fsync_dir(folder)
    return before


def _take_back(folder: str, before: int | None, seq: int, why: str) -> None:
    """Undo the entry of a write that changed no file: the log as it was, byte for byte
    (a new segment is voided instead: the rotation cannot be undone)."""
    path = os.path.join(folder, LOG)
    if before is None:
        _append(folder, {"seq": seq, "void": why}, sync=True)
        return
    fd = os.open(path, os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        os.ftruncate(fd, before)
        os.fsync(fd)
    finally:
        os.close(fd)


def first_log(entry: Entry) -> bytes:
    """The log of a new plan (PlanCreate stages it with the plan's files)."""
    return _dumps({"seq": 1, **entry.to_dict()})


def copied_log(entries: list[Entry]) -> bytes:
    """The log of a copied plan: its entries, numbered afresh, the newest SEGMENT_BYTES kept."""
    lines = [_dumps({"seq": n, **e.to_dict()}) for n, e in enumerate(entries, 1)]
    kept, size = [], 0
    for line in reversed(lines):
        size += len(line)
        if size > SEGMENT_BYTES:
            break
        kept.append(line)
    return b"".join(reversed(kept))


def commit_logged(
    folder: str,
    seq: int,
    entry: Entry,
    writes: list[tuple[str, bytes]],
    removals: list[str],
    unsynced: Collection[str] = (),
) -> None:
    """Write `writes` and remove `removals` with `entry` (number `seq`, as settle() gave it
    under the same hold of the lock) as the commit point (the module docstring); the data of
    the targets in `unsynced` is not fsynced (a file a power cut may leave empty without
    harm). Raises atomic.PartialWrite or OSError as atomic.replace_many does; the entry is
    then voided, since the write did not happen (whole)."""
    staged, stamps = _stage(writes, unsynced)
    names = [[os.path.basename(t), os.path.basename(g), *st] for (t, g), st in zip(staged, stamps, strict=True)]
    redo = {"tmp": names, "rm": [[os.path.basename(p), *st] for p in removals if (st := _stamp_of(p))]}
    before = _append(folder, {"seq": seq, **entry.to_dict(), "redo": redo}, sync=True, rotate=True)
    # From here the write happens: a crash is rolled forward by settle().
    for done, (tmp, target) in enumerate(staged):
        try:
            os.replace(tmp, target)
        except OSError as e:
            _rename_failed(folder, before, seq, staged, done, e)
            raise
    _finish(folder, bool(staged), removals)
    _append(folder, {"seq": seq, "done": 1}, sync=False)  # a lost marker only makes settle redo nothing


def _finish(folder: str, renamed: bool, removals: list[str]) -> None:
    """The removals after the renames, then one fsync of the folder for both: the entries of
    one folder reach the disk in the order they were made, so no power cut keeps a removal
    and loses a rename made before it (the order commit() chose)."""
    for path in removals:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    if renamed or removals:
        atomic.fsync_dir(folder)


def _stage(writes: list[tuple[str, bytes]], unsynced: Collection[str]) -> tuple[list[tuple[str, str]], list[list[int]]]:
    """Each write's data in a temp file beside its target, synced unless its target is in
    `unsynced`: (temp, target) pairs and the temp files' stamps. On any failure the temp
    files made are removed."""
    staged: list[tuple[str, str]] = []
    stamps: list[list[int]] = []
    try:
        for target, data in writes:
            tmp = atomic.temp_name(target)
            staged.append((tmp, target))
            write = atomic.write_unsynced if target in unsynced else atomic.write_synced
            stamps.append(_stamp(write(tmp, data)))
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    return staged, stamps


def _rename_failed(
    folder: str, before: int | None, seq: int, staged: list[tuple[str, str]], done: int, e: OSError
) -> None:
    """The rename of staged[done] failed: the entry is taken back (nothing renamed yet) or
    voided, the temp files left are removed; PartialWrite when some renames happened (the
    caller re-raises `e` otherwise)."""
    why = f"write failed: {e.strerror or e}"
    with contextlib.suppress(OSError):  # first: a crash now leaves temp files, no entry
        _take_back(folder, before, seq, why) if not done else _append(folder, {"seq": seq, "void": why}, sync=True)
    for left, _ in staged[done:]:
        with contextlib.suppress(OSError):
            os.unlink(left)
    if done:
        with contextlib.suppress(OSError):
            atomic.fsync_dir(folder)
        raise atomic.PartialWrite(e, [t for _, t in staged[:done]]) from e


def log_archive(folder: str, seq: int, entry: Entry) -> None:
    """Before the folder moves to done/: the archive's entry (number `seq`, as settle()
    gave it), which counts once the folder moved."""
    _append(folder, {"seq": seq, **entry.to_dict(), "move": "done"}, sync=True, rotate=True)


def _stamp(st: os.stat_result) -> list[int]:
    """What tells the file a writer made or saw on this machine from any other: its inode
    and nanosecond modification time (a rename keeps both)."""
    return [st.st_ino, st.st_mtime_ns]


def _stamp_of(path: str) -> list[int] | None:
    try:
        return _stamp(os.lstat(path))
    except OSError:
        return None  # nothing there: nothing to remove


def _own_name(name: Any) -> bool:
    """Never trust a name from the log with a path: only our files in this folder."""
    if not isinstance(name, str) or os.path.basename(name) != name or name in ("", ".", ".."):
        return False
    return bool(TASK_FILE.fullmatch(name)) or name == HIGHWATERMARK


def _carries(path: str, stamp: list[Any]) -> bool | None:
    """True: a regular file with this stamp is at `path`; False: something else; None: nothing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and _stamp(st) == stamp


class _Replay:
    """One entry's roll forward: what it proved (a file carrying its stamp) and what it
    named that is there without it (another's file: never touched)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.proven = self.foreign = 0

    def _count(self, found: bool | None) -> bool:
        self.proven += found is True
        self.foreign += found is False
        return found is True

    def renames(self, items: Any) -> list[tuple[str, str]]:
        """The (temp file, target) renames still to make: temp files carrying their stamp."""
        due = []
        for item in items if isinstance(items, list) else []:
            shaped = isinstance(item, list) and len(item) == 4 and _own_name(item[1])
            if not shaped or not isinstance(item[0], str) or not atomic.is_temp_of(item[0], item[1]):
                self.foreign += 1
                continue
            tmp, target = os.path.join(self.folder, item[0]), os.path.join(self.folder, item[1])
            if self._count(_carries(tmp, item[2:])):
                due.append((tmp, target))
            else:
                self._count(_carries(target, item[2:]))  # renamed before the crash
        return due

    def removals(self, items: Any) -> list[str]:
        """The files still to remove: those carrying the stamp the writer saw."""
        due = []
        for item in items if isinstance(items, list) else []:
            if not (isinstance(item, list) and len(item) == 3 and _own_name(item[0])):
                self.foreign += 1
                continue
            path = os.path.join(self.folder, item[0])
            if self._count(_carries(path, item[1:])):
                due.append(path)
        return due


def settle(folder: str) -> int:
    """Under the plan's lock, before anything is read: finish the last entry's write if a
    crash interrupted it (or void an archive that did not move the folder); an entry this
    store did not write here (the module docstring) is voided, touching nothing. Returns
    the number the next entry takes (the log's tail is read once a write)."""
    last = last_record(folder)
    following = _seq_after(last)
    if last is not None and ("redo" in last or "move" in last):
        _finish_last(folder, last)
    return following


def _seq_after(last: dict[str, Any] | None) -> int:
    return int(last.get("seq", 0)) + 1 if last else 1


def _finish_last(folder: str, last: dict[str, Any]) -> None:
    """settle() for a last entry that names a write or an archive."""
    seq = last.get("seq")
    if last.get("move"):  # we are in todo/: the folder never moved
        _append(folder, {"seq": seq, "void": "the archive did not happen"}, sync=True)
        return
    redo: dict[str, Any] = last["redo"] if isinstance(last.get("redo"), dict) else {}
    replay = _Replay(folder)
    renames, gone = replay.renames(redo.get("tmp")), replay.removals(redo.get("rm"))
    if replay.foreign and not replay.proven:
        _append(folder, {"seq": seq, "void": "not written by this store on this machine"}, sync=True)
        return
    try:
        for tmp, target in renames:
            os.replace(tmp, target)
    except OSError as e:  # what stopped the writer stops us: say so, never loop on it
        _append(folder, {"seq": seq, "void": f"could not finish: {e.strerror or e}"}, sync=True)
        return
    _finish(folder, bool(renames), gone)
    _append(folder, {"seq": seq, "done": 1}, sync=True)
