"""Promise: a repository's files cannot make planning-mcp do work out of proportion to them.
A plan's history log that is damaged or hostile (a gigabyte without a line break) is read
in bounded time: start-up, TaskGet and TaskUpdate answer, and the good records after the
damage are read."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from planning_core.stores.files import historyread
from tests.support.mcp import text_of
from tests.support.procs import console_script, stop
from tests.support.raw_stdio import RawStdio
from tests.support.seed import chain, make_plan
from tests.support.waits import bound

HOLE = 1 << 30  # a gigabyte of NULs, as a hole in a sparse file (costs no disk)


def _entry(seq: int, by: str, task: int) -> bytes:
    record = {
        "seq": seq,
        "at": "2026-05-28T10:00:00.000Z",
        "by": by,
        "events": [{"op": "updated", "task": task, "subject": f"t{task}", "fields": ["description"]}],
    }
    return (json.dumps(record, separators=(",", ":")) + "\n").encode()  # as the store writes it


@pytest.fixture
def hostile_log(tmp_path: Path) -> Path:
    """A plan of 3 tasks whose log is: its good records, 1 GiB of NULs without a line
    break, then a good record (task #2 changed by `after-the-damage`)."""
    folder = make_plan(tmp_path / "root", "fragile", chain(3))
    log = folder / historyread.LOG
    with log.open("r+b") as f:
        f.truncate(log.stat().st_size + HOLE)
        f.seek(0, os.SEEK_END)
        f.write(b"\n" + _entry(90, "after-the-damage", 2))
    return folder


def test_a_log_without_line_breaks_is_read_in_bounded_time(tmp_path: Path, hostile_log: Path) -> None:
    wire = RawStdio(tmp_path / "root", tmp_path / "stderr.log", command=[console_script()], cwd=tmp_path)
    try:
        wire.initialize(timeout=bound(20))  # start-up settles every plan's log
        plan = hostile_log.name
        got = wire.call("TaskGet", {"taskId": 2, "plan": plan}, timeout=bound(10))
        assert "after-the-damage" in text_of(got), text_of(got)  # the good record after the damage
        done = wire.call("TaskUpdate", {"taskId": 1, "status": "completed", "plan": plan}, timeout=bound(10))
        assert not done.get("result", {}).get("isError"), done
        got = wire.call("TaskGet", {"taskId": 1, "plan": plan}, timeout=bound(10))
        assert "completed" in text_of(got)
        wire.assert_serving()
    finally:
        stop(wire.proc)
    # The damaged segment was set aside by the write, whole: nothing of the repository's is lost.
    assert max(p.stat().st_size for p in hostile_log.glob("history*.jsonl")) > HOLE


def _lines_read(path: Path, limit: int | None = None) -> list[bytes]:
    """Every line the reader gives, in file order."""
    blocks = list(historyread._chunks_backwards(os.fspath(path), limit))
    return [line for block in reversed(blocks) for line in block.split(b"\n") if line]


@pytest.fixture
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Chunks and bounds a few bytes long, so that every boundary is crossed."""
    monkeypatch.setattr(historyread, "_FIRST_CHUNK", 3)
    monkeypatch.setattr(historyread, "_CHUNK", 7)
    monkeypatch.setattr(historyread, "MAX_LINE", 40)
    monkeypatch.setattr(historyread, "SEGMENT_READ", 1000)
    yield


@pytest.mark.parametrize("seed", range(20))
def test_the_log_is_read_backwards_line_by_line_skipping_overlong_lines(
    tmp_path: Path, small_bounds: None, seed: int
) -> None:
    rng = random.Random(seed)
    lines = [bytes(rng.choice(b"abc{}") for _ in range(rng.choice([1, 5, 20, 38, 39, 45, 200]))) for _ in range(30)]
    path = tmp_path / "log"
    torn = rng.random() < 0.5  # the last line without its line break (a power loss)
    path.write_bytes(b"\n".join(lines) + (b"" if torn else b"\n"))
    # A line counts with its line break: at most MAX_LINE bytes.
    kept = [line for line in lines if len(line) + 1 <= 40 or (torn and line is lines[-1] and len(line) <= 40)]
    assert _lines_read(path, 10**6) == kept


def test_only_the_last_bytes_of_a_segment_are_read(tmp_path: Path, small_bounds: None) -> None:
    path = tmp_path / "log"
    lines = [b"%04d" % i for i in range(400)]  # 5 bytes a line
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert _lines_read(path, 52) == lines[-10:]  # the 11th from the end is cut by the start: left out
    assert _lines_read(path, 50) == lines[-9:]  # a line that starts the bytes read is not known whole
    assert _lines_read(path) == lines[-199:]  # SEGMENT_READ unless told
    assert historyread._read_size(os.fspath(path), 52) == 52


@pytest.mark.parametrize(("broken", "read"), [(10, [2, 1]), (100, [2])])
def test_a_log_of_tiny_broken_lines_is_not_read_past_what_a_segment_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: int, read: list[int]
) -> None:
    """Lines that cannot be records cost a split, never a parse, and no more of them are
    read than a segment this store writes can hold (here 50): what is before them is damage."""
    monkeypatch.setattr(historyread, "MAX_SEGMENT_LINES", 50)
    folder = tmp_path / "plan"
    folder.mkdir()
    (folder / historyread.LOG).write_bytes(_entry(1, "a", 1) + b"x\n" * broken + _entry(2, "b", 2))
    assert [seq for seq, _ in historyread.entries(str(folder), archived=False)] == read
    last = historyread.last_record(str(folder))
    assert last is not None and last["seq"] == 2
