"""The file store's history log, read: the names of its segments and every bounded read of
them (historylog.py writes it and says what its records mean).

A repository can commit a log, so a log is read as untrusted input: never through a link
(`O_NOFOLLOW`, regular files only), from the end in chunks, at most SEGMENT_READ bytes and
MAX_SEGMENT_LINES lines of each segment, a line past MAX_LINE skipped as damage, and a line
parsed only when it starts as our records do.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator
from typing import Any

from ... import history
from ...history import Entry, Logged

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
_RECORD_HEAD = b'{"seq":'  # every record is written with its seq first (historylog._dumps keeps the order)
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


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


def last_record(folder: str) -> dict[str, Any] | None:
    """The last record, done markers included (historylog.settle needs to know an entry was finished)."""
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
