"""Knowing which files of a plan folder changed since the last read, without a stat per file.

Linux's inotify queues an event for every change to a watched folder inside the system
call that makes it: a rename into the folder, an unlink, a write() in place, a chmod. So
by the time another process's write has returned, its event is already in our queue,
and draining the queue (one non-blocking read(), EAGAIN when nothing happened) at the
start of a read tells us every file changed before that read began. That ordering is
what lets the folder index serve a page without looking at any task file and still
never serve stale data.

Where inotify cannot be had (not Linux, no instances left, a watch refused) `Watcher`
says so (`available` False, or `watch()` returning False) and the caller falls back to
a stat per file. A queue overflow is reported as `OVERFLOW`: the caller then trusts
nothing it kept. Changes inotify never reports: writes through a shared mmap, and
changes made on another machine to a network file system (NFS, SMB); see the README.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
import threading
import weakref
from collections.abc import Callable
from pathlib import Path

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

CHANGES = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
# What changes a file's content or a folder's names (not its mode or owner).
CONTENT_CHANGES = CHANGES & ~IN_ATTRIB
SELF = IN_DELETE_SELF | IN_MOVE_SELF
EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name
OVERFLOW = Path("/")  # in drain()'s answer: events were lost, every folder may have changed
GONE = ""  # in drain()'s answer as a file name: the folder itself moved or went away


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def available() -> bool:
    """Whether this system has inotify at all (a Watcher may still find no instance left)."""
    return _LIBC is not None


class Watcher:
    """One inotify instance: folders watched, and what changed in them since the last drain."""

    def __init__(self, changes: int = CHANGES) -> None:
        """`changes`: the events that count (every change, by default)."""
        self._mask = changes | SELF | IN_ONLYDIR
        self._lock = threading.Lock()
        self._paths: dict[int, Path] = {}
        self._wds: dict[Path, int] = {}
        self.refused = 0  # the errno of the last watch() refused
        self.fd = -1
        self._close: Callable[[], object] | None = None
        if _LIBC is not None:
            fd = int(_LIBC.inotify_init1(IN_NONBLOCK | IN_CLOEXEC))
            if fd >= 0:
                self.fd = fd
                self._close = weakref.finalize(self, os.close, fd)

    def close(self) -> None:
        """Give the inotify instance back now (else when the watcher is collected)."""
        if self._close is not None:
            with self._lock:
                self._close()
                self.fd = -1
                self._paths.clear()
                self._wds.clear()

    @property
    def available(self) -> bool:
        return self.fd >= 0

    def watch(self, folder: Path, *, follow: bool = False) -> bool:
        """Start watching `folder` (before it is read, so no change can fall between); a
        symbolic link is followed only where `follow`. False if it cannot be watched (the
        reason's errno in `refused`): the caller must then stat its files itself."""
        if self.fd < 0 or _LIBC is None:
            return False
        with self._lock:
            mask = self._mask if follow else self._mask | IN_DONT_FOLLOW
            # Always asked of the kernel, never answered from our table: a folder removed and
            # made again under this name is another folder, whose watch is another id, even
            # while the old one's removal is still unread (queued, held open, or lost).
            wd = int(_LIBC.inotify_add_watch(self.fd, os.fsencode(folder), mask))
            if wd < 0:  # ENOSPC (no watches left), ENOENT, EACCES, ENOTDIR
                self.refused = ctypes.get_errno()
                return False
            old = self._wds.get(folder)
            if old is not None and old != wd:  # the folder that had this name: its events are no one's now
                self._paths.pop(old, None)
                _LIBC.inotify_rm_watch(self.fd, old)
            other = self._paths.get(wd)
            if other is not None and other != folder and self._wds.get(other) == wd:
                del self._wds[other]  # this folder under its new name (a staging folder put in place)
            self._paths[wd] = folder
            self._wds[folder] = wd
            return True

    def unwatch(self, folder: Path) -> None:
        with self._lock:
            wd = self._wds.pop(folder, None)
            if wd is not None:
                self._paths.pop(wd, None)
                if _LIBC is not None:
                    _LIBC.inotify_rm_watch(self.fd, wd)

    def drain(self) -> dict[Path, set[str]]:
        """Every watched folder with an event since the last drain, and the names in it
        that changed (GONE if the folder itself moved or was removed; the folder is then
        no longer watched). OVERFLOW as a key: events were lost."""
        changed: dict[Path, set[str]] = {}
        if self.fd < 0:
            return changed
        with self._lock:
            while True:
                try:
                    buf = os.read(self.fd, 65536)
                except BlockingIOError:
                    break
                except OSError as e:
                    if e.errno == errno.EINTR:
                        continue
                    changed[OVERFLOW] = set()
                    break
                pos = 0
                while pos + EVENT.size <= len(buf):
                    wd, mask, _, size = EVENT.unpack_from(buf, pos)
                    name = buf[pos + EVENT.size : pos + EVENT.size + size].rstrip(b"\0")
                    pos += EVENT.size + size
                    if mask & IN_Q_OVERFLOW:
                        changed[OVERFLOW] = set()
                        continue
                    folder = self._paths.get(wd)
                    if folder is None:
                        continue
                    names = changed.setdefault(folder, set())
                    if mask & (SELF | IN_IGNORED):
                        names.add(GONE)
                        self._paths.pop(wd, None)
                        if self._wds.get(folder) == wd:
                            del self._wds[folder]
                        if not mask & IN_IGNORED and _LIBC is not None:
                            _LIBC.inotify_rm_watch(self.fd, wd)
                    elif name:
                        names.add(os.fsdecode(name))
        return changed
