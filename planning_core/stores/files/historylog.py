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
from collections.abc import Collection, Iterable, Iterator
from typing import Any

from ... import history
from ...fileio import atomic
from ...history import Entry, Logged
from .taskfiles import HIGHWATERMARK, TASK_FILE

LOG = "history.jsonl"
SEGMENT_BYTES = 4 * 1024 * 1024  # a segment rotates past this (about 25,000 entries)
SEGMENTS = 4  # segments kept: history.jsonl, history.1.jsonl … history.3.jsonl
SEGMENT_NAMES = (LOG, *(f"history.{i}.jsonl" for i in range(1, SEGMENTS)))
GITIGNORE_LINE = "history*.jsonl"
# TaskGet looks for a task's last events in the newest part of the log only (some thousands
# of entries), so its cost stays that of a read of a bounded tail however long the plan has
# lived; `planning-mcp log` pages through all of it.
TASK_EVENTS_SCAN = 256 * 1024
# What a repository's log can make a reader do is bounded: a line longer than MAX_LINE is
# damage (the largest entry a write makes, an import of the most tasks it takes, is far
# shorter), skipped without being joined or parsed, and of each segment only the last
# SEGMENT_READ bytes are read (a segment this store wrote never holds more; what a longer
# one holds before them is damage too). A read of the whole log reads at most
# SEGMENTS * SEGMENT_READ bytes, each once.
MAX_LINE = 16 * 1024 * 1024
SEGMENT_READ = SEGMENT_BYTES + MAX_LINE
# Nor more lines than a segment we wrote can hold: an entry takes over 100 bytes (its time
# alone 30) and the marker after it 19 or more, so its lines average over 48 bytes; a log of
# tiny lines is not parsed past that.
MAX_SEGMENT_LINES = SEGMENT_BYTES // 48
_FIRST_CHUNK = 16 * 1024
_CHUNK = 1024 * 1024
_DONE_TAIL = b',"done":1}'
_RECORD_HEAD = b'{"seq":'  # every record is written with its seq first (_dumps keeps the order)
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
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
    last = _last_record(folder)
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


# -- reading ------------------------------------------------------------------------------


class _LinePieces:
    """The later pieces of a line read backwards, kept as read and joined once when its
    start is found: each byte is copied a bounded number of times however long the line.
    Past MAX_LINE the line is damage: its pieces are dropped and it is left out."""

    def __init__(self, first: bytes = b"") -> None:
        self.pieces = [first] if first else []
        self.size = len(first)
        self.damaged = self.size > MAX_LINE

    def add(self, earlier: bytes) -> None:
        self.size += len(earlier)
        if self.size > MAX_LINE:
            self.damaged, self.pieces = True, []
        elif not self.damaged:
            self.pieces.append(earlier)

    def close(self, head: bytes) -> bytes:
        """`head` (whole lines, then the line's start) with the line's pieces after it."""
        start = head.rfind(b"\n") + 1
        if self.damaged or len(head) - start + self.size > MAX_LINE:
            return head[:start]
        return head + b"".join(reversed(self.pieces)) if self.pieces else head


def _chunks_backwards(path: str, limit: int | None = None) -> Iterator[bytes]:
    """The file's whole lines in blocks, last block first, each block's lines in file order,
    from at most its last `limit` bytes (SEGMENT_READ unless told; a line cut by that start
    is left out): read in chunks from the end, never the whole file."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        pos = os.fstat(fd).st_size
        stop = max(0, pos - (SEGMENT_READ if limit is None else limit))
        later = _LinePieces()  # the line that goes on past the chunk read last
        chunk = _FIRST_CHUNK  # small first: the newest page is near the end
        while pos > stop:
            n = min(chunk, pos - stop)
            chunk = min(chunk * 4, _CHUNK)
            pos -= n
            data = os.pread(fd, n, pos)
            cut = data.find(b"\n") if pos else -1
            if cut < 0 and pos:
                if pos == stop:
                    return  # the line began before the bytes we read: not read whole
                later.add(data)
                continue
            block = later.close(data[cut + 1 :])
            later = _LinePieces(data[: cut + 1])
            if block:
                yield block
    finally:
        os.close(fd)


def _read_size(path: str, limit: int) -> int:
    """How many bytes _chunks_backwards(path, limit) reads."""
    try:
        return min(os.lstat(path).st_size, limit)
    except OSError:
        return 0


def _lines(block: bytes, wanted: tuple[bytes, ...] | None) -> list[bytes]:
    """The block's lines, last first; with `wanted`, only those holding one of its byte
    strings (found by bytes.find over the whole block, so a long log is scanned at the speed
    of bytes, not of lines)."""
    if wanted is None:
        return [line for line in reversed(block.split(b"\n")) if line]
    starts: set[int] = set()
    for needle in wanted:
        at = block.find(needle)
        while at >= 0:
            starts.add(block.rfind(b"\n", 0, at) + 1)
            at = block.find(needle, at + len(needle))
    found = []
    for start in sorted(starts, reverse=True):
        stop = block.find(b"\n", start)
        found.append(block[start : stop if stop >= 0 else len(block)])
    return found


def _record_lines(path: str, wanted: tuple[bytes, ...] | None, limit: int) -> Iterator[bytes]:
    """The segment's lines that may be records, newest first, of at most its last `limit`
    bytes and MAX_SEGMENT_LINES lines: past those it is damage, left unread."""
    seen = 0
    for block in _chunks_backwards(path, limit):
        for line in _lines(block, wanted):
            seen += 1
            if seen > MAX_SEGMENT_LINES:
                return
            if line.startswith(_RECORD_HEAD):  # anything else is damage: never parsed
                yield line


def _parsed(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None  # a torn line a power loss left
    return value if isinstance(value, dict) and isinstance(value.get("seq"), int) else None


def _records(
    folder: str, wanted: tuple[bytes, ...] | None = None, budget: int | None = None
) -> Iterator[dict[str, Any]]:
    """Every record, newest first; with `wanted`, only the lines it matches (and the void
    markers): a task's events are found without parsing every line. With `budget`, only the
    newest `budget` bytes of the log are read."""
    left = budget
    for name in SEGMENT_NAMES:
        path = os.path.join(folder, name)
        limit = SEGMENT_READ if left is None else min(SEGMENT_READ, left)
        if limit <= 0:
            return  # a bounded tail was asked for, and read
        for line in _record_lines(path, wanted, limit):
            if line.endswith(_DONE_TAIL) and len(line) < 40:
                continue  # a commit marker: readers need only the entries and the voids
            value = _parsed(line)
            if value is not None:
                yield value
        if left is not None:
            left -= _read_size(path, limit)


def _last_record(folder: str) -> dict[str, Any] | None:
    """The last record, done markers included (settle needs to know an entry was finished)."""
    for name in SEGMENT_NAMES:
        for line in _record_lines(os.path.join(folder, name), None, SEGMENT_READ):
            value = _parsed(line)
            if value is not None:
                return value
    return None


def entries(
    folder: str, *, archived: bool, wanted: tuple[bytes, ...] | None = None, budget: int | None = None
) -> Iterator[tuple[int, Entry]]:
    """Every entry that counts, newest first: not voided (a marker follows its entry, so
    it is read first), and an archive's only once the folder is in done/."""
    void: set[int] = set()
    for record in _records(folder, wanted, budget):
        seq = record["seq"]
        if "void" in record:
            void.add(seq)
        elif "events" in record and seq not in void and (not record.get("move") or archived):
            yield seq, Entry.from_dict(record)


# Pages already read, each kept with the log's identity when it was read (its inode, size and
# time: an append or a rotation changes it), so asking again for the newest page of an
# unchanged log (the board, `log` watched) reads nothing. Bounded; the oldest page goes first.
_PAGES: dict[tuple[str, bool, int, str | None], tuple[tuple[int, int, int], list[Logged], str | None]] = {}
MAX_KEPT_PAGES = 64


def _identity(folder: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(os.path.join(folder, LOG), follow_symlinks=False)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def page(plan: str, folder: str, *, archived: bool, limit: int, cursor: str | None) -> tuple[list[Logged], str | None]:
    key = (folder, archived, limit, cursor)
    identity = _identity(folder)
    kept = _PAGES.get(key)
    if identity is not None and kept is not None and kept[0] == identity:
        return list(kept[1]), kept[2]
    found, following = history.page_of(plan, entries(folder, archived=archived), limit, cursor)
    if identity is not None:
        if len(_PAGES) >= MAX_KEPT_PAGES:
            del _PAGES[next(iter(_PAGES))]
        _PAGES[key] = (identity, list(found), following)
    return found, following


def task_events(plan: str, folder: str, task_id: int, *, archived: bool, limit: int) -> list[Logged]:
    wanted = (b'"task":%d,' % task_id, b'"task":%d}' % task_id, b'"void":')
    found = entries(folder, archived=archived, wanted=wanted, budget=TASK_EVENTS_SCAN)
    return history.task_of(plan, found, task_id, limit)


def since(plan: str, folder: str, start: str, limit: int) -> list[Logged]:
    return history.since_of(plan, entries(folder, archived=False), start, limit)


def since_all(todo: str, plans: Iterable[str], start: str, limit: int) -> list[Logged]:
    """The events of the active plans `plans` (folders of `todo`) at `start` or later,
    newest first, at most `limit` (PlanStore.events_since)."""
    return history.newest((e for n in plans for e in since(n, f"{todo}/{n}", start, limit)), limit)


def read_all(folder: str, *, archived: bool) -> list[Entry]:
    """Every entry that counts, oldest first (a copy's history)."""
    return [e for _, e in reversed(list(entries(folder, archived=archived)))]
