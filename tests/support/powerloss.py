"""What a power cut may leave of the file store: the file-system operations of one write,
recorded in-process, and every crash state they allow, built on disk.

The recorder wraps, for the duration of one operation, the calls the file store makes to
change the tree (planning_core/fileio/atomic.py's write_synced and fsync_dir, and
os.open with O_CREAT, os.replace, os.rename, os.unlink, os.mkdir), performing each for real
and noting it. The rules of a crash (as ALICE and CrashMonkey model a POSIX file system):

- a file's data is durable once fsynced (write_synced fsyncs before it returns); a file
  created without fsync may come back empty;
- a directory entry (create, rename, unlink, mkdir) is durable once its directory is
  fsynced after it; before that it may be lost. The entries of one directory persist in
  the order they were made (a prefix), each directory independently; a rename between two
  directories persists in both or in neither;
- a crash may come after any operation.

So a crash state is: a crash point k (after the first k operations), and for each directory,
how many of its not-yet-durable entries survived. `crash_states` builds each one as a copy
of the tree from before the operation with the surviving operations applied.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planning_core.fileio import atomic


@dataclass(frozen=True)
class Op:
    kind: str  # "create", "rename", "unlink", "mkdir", "fsync_dir"
    path: str  # relative to the root
    dest: str = ""  # a rename's target
    data: bytes = b""  # a create's bytes
    synced: bool = True  # a create's data fsynced

    def dirs(self) -> set[str]:
        """The directories whose entries this operation changes."""
        if self.kind == "fsync_dir":
            return set()
        found = {os.path.dirname(self.path)}
        if self.kind == "rename":
            found.add(os.path.dirname(self.dest))
        return found


@dataclass
class Recording:
    root: str
    ops: list[Op] = field(default_factory=list)

    def rel(self, path: Any) -> str | None:
        full = os.path.abspath(os.fspath(path))
        if full != self.root and not full.startswith(self.root + os.sep):
            return None
        return os.path.relpath(full, self.root)


class _Recorder:
    """The wrapped calls: each does the real thing, then notes it when under the root."""

    def __init__(self, rec: Recording) -> None:
        self.rec = rec
        self.real = {name: getattr(os, name) for name in ("open", "replace", "rename", "unlink", "mkdir")}
        self.real_write, self.real_fsync_dir = atomic.write_synced, atomic.fsync_dir
        self.inside = 0  # write_synced opens its file itself: noted once, as a synced create

    def write_synced(self, path: Any, data: bytes, dir_fd: int | None = None) -> os.stat_result:
        self.inside += 1
        try:
            written = self.real_write(path, data, dir_fd)
        finally:
            self.inside -= 1
        rel = self.rec.rel(path) if dir_fd is None else None
        if rel is not None:
            self.rec.ops.append(Op("create", rel, data=bytes(data)))
        return written  # its stat: the history log stamps each file with it

    def fsync_dir(self, folder: Any) -> None:
        self.real_fsync_dir(folder)
        rel = self.rec.rel(folder)
        if rel is not None:
            self.rec.ops.append(Op("fsync_dir", rel))

    def open(self, path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        rel = self.rec.rel(path) if isinstance(path, str | os.PathLike) and "dir_fd" not in kwargs else None
        existed = rel is not None and os.path.lexists(path)
        fd = self.real["open"](path, flags, *args, **kwargs)
        if rel is not None and flags & os.O_CREAT and not existed and not self.inside:
            self.rec.ops.append(Op("create", rel, synced=False))
        return int(fd)

    def moved(self, kind: str) -> Callable[..., None]:
        def move(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            self.real[kind](src, dst, *args, **kwargs)
            a, b = self.rec.rel(src), self.rec.rel(dst)
            if a is not None and b is not None and not kwargs:
                self.rec.ops.append(Op("rename", a, dest=b))

        return move

    def changed(self, kind: str) -> Callable[..., None]:
        """unlink or mkdir of one path (calls relative to a dir_fd, as rmtree's, are not noted)."""

        def change(path: Any, *args: Any, **kwargs: Any) -> None:
            self.real[kind](path, *args, **kwargs)
            rel = self.rec.rel(path) if not kwargs.get("dir_fd") else None
            if rel is not None:
                self.rec.ops.append(Op(kind, rel))

        return change


@contextmanager
def recording(root: Path) -> Iterator[Recording]:
    """Record what is done to the tree under `root` while the block runs (one thread)."""
    rec = Recording(str(root.resolve()))
    r = _Recorder(rec)
    patched: dict[str, Any] = {
        "open": r.open,
        "replace": r.moved("replace"),
        "rename": r.moved("rename"),
        "unlink": r.changed("unlink"),
        "mkdir": r.changed("mkdir"),
    }
    try:
        for name, fn in patched.items():
            setattr(os, name, fn)
        atomic.write_synced, atomic.fsync_dir = r.write_synced, r.fsync_dir  # type: ignore[assignment]
        yield rec
    finally:
        for name, fn in r.real.items():
            setattr(os, name, fn)
        atomic.write_synced, atomic.fsync_dir = r.real_write, r.real_fsync_dir  # type: ignore[assignment]


@dataclass(frozen=True)
class CrashState:
    point: int  # operations issued before the crash
    kept: tuple[int, ...]  # indexes of the operations whose effect survived


def crash_states(ops: list[Op]) -> Iterator[CrashState]:
    """Every crash state of `ops` under the rules of the module docstring."""
    for point in range(len(ops) + 1):
        issued = ops[:point]
        durable: set[int] = set()
        pending: dict[str, list[int]] = {}  # directory -> its entries not yet durable, in order
        for i, op in enumerate(issued):
            if op.kind == "fsync_dir":
                for j in pending.pop(op.path, []):
                    durable.add(j)
                continue
            for d in op.dirs():
                pending.setdefault(d, []).append(i)
        dirs = sorted(pending)
        seen: set[tuple[int, ...]] = set()
        for lengths in itertools.product(*(range(len(pending[d]) + 1) for d in dirs)):
            survived = set(durable)
            chosen: dict[int, int] = {}  # op -> how many of its directories kept it
            for d, n in zip(dirs, lengths, strict=True):
                for j in pending[d][:n]:
                    chosen[j] = chosen.get(j, 0) + 1
            # a rename across directories survives in both or in neither (a durable one has)
            if any(j not in durable and count != len(issued[j].dirs()) for j, count in chosen.items()):
                continue
            survived.update(chosen)
            kept = tuple(sorted(i for i in survived if ops[i].kind != "fsync_dir"))
            if kept not in seen:
                seen.add(kept)
                yield CrashState(point, kept)


def build(before: Path, ops: list[Op], state: CrashState, into: Path) -> None:
    """The tree `state` leaves: a copy of `before` with the surviving operations applied, in
    order. An entry whose directory did not survive is unreachable, so it is not made."""
    shutil.copytree(before, into, symlinks=True)
    for i in state.kept:
        op = ops[i]
        path = into / op.path
        if not path.parent.is_dir():
            continue
        if op.kind == "create":
            path.write_bytes(op.data if op.synced else b"")
        elif op.kind == "mkdir":
            path.mkdir(exist_ok=True)
        elif op.kind == "unlink":
            if path.exists() or path.is_symlink():
                path.unlink()
        elif op.kind == "rename":
            dest = into / op.dest
            if (path.exists() or path.is_symlink()) and dest.parent.is_dir():
                if dest.is_dir() and not path.is_dir():
                    continue
                os.replace(path, dest)
