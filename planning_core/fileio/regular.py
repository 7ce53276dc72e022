"""Reading a file of a plan folder without ever blocking on it or reading too much.

Plan folders are hand-editable, so anything may sit where a task file, plan.md or
.highwatermark should be. Opening a FIFO for reading blocks until a writer appears
(forever, and on the server's event loop); reading a device or a 100 MB file stalls
every request. So every read of the core goes through read_regular(), which

- checks the kind before opening when a stat is at hand (lstat otherwise),
- opens with O_NOFOLLOW (a symlink is refused, never followed) and O_NONBLOCK (a FIFO
  that replaced the file between the check and the open then opens at once),
- fstat()s what it opened and refuses anything that is not a regular file,
- refuses a file larger than the caller's bound and reads at most bound + 1 bytes
  (a file growing while we read is caught too).

A missing file raises FileNotFoundError, as open() does; every other refusal raises
UnreadableFile, whose message is the reason, phrased like the other damaged-file
reasons ("it is a FIFO (named pipe), not a regular file").
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_CHUNK = 64 * 1024

# plan.md as PlanCreate writes it: title 200, analysis and approach 100,000 characters
# each, 200 steps of 2,000: at most about 2.4 MB even in 4-byte characters. Bigger is a
# hand edit that PlanGet would otherwise read whole into one answer.
MAX_PLAN_MD_BYTES = 4 * 1024 * 1024
MAX_HIGHWATERMARK_BYTES = 64  # nine digits and a newline; anything longer is not ours


class UnreadableFile(Exception):
    """The file exists but is refused; str(e) says why, for the person who fixes it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def kind_of(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def not_regular(mode: int) -> UnreadableFile:
    return UnreadableFile(f"it is {kind_of(mode)}, not a regular file")


def too_big(size: int, limit: int, what: str) -> UnreadableFile:
    return UnreadableFile(f"it is {size:,} bytes; {what} is at most {limit:,} bytes")


def read_regular(
    path: Path | str,
    limit: int,
    what: str = "this file",
    st: os.stat_result | None = None,
    *,
    head: bool = False,
    dir_fd: int | None = None,
) -> bytes:
    """The bytes of the regular file at `path` (at most `limit`). `st` is an lstat the
    caller already has (a scandir entry's), saving one system call. head=True: the
    first `limit` bytes of a file of any size (a title line), instead of refusing it.
    dir_fd: `path` is a name in that open folder (no folder on the way is looked up)."""
    if st is None:
        st = os.lstat(path, dir_fd=dir_fd)  # FileNotFoundError propagates: "missing" is not "damaged"
    _check(st, limit, what, head)
    fd = _open(path, dir_fd)
    try:
        _check(os.fstat(fd), limit, what, head)  # what we opened, which may not be what we checked
        return _read(fd, limit, what, head)
    except OSError as e:
        raise UnreadableFile(f"cannot read it ({e.strerror})") from None
    finally:
        os.close(fd)


def _check(st: os.stat_result, limit: int, what: str, head: bool) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise not_regular(st.st_mode)
    if st.st_size > limit and not head:
        raise too_big(st.st_size, limit, what)


def _open(path: Path | str, dir_fd: int | None) -> int:
    try:
        return os.open(path, _FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnreadableFile("it is a symbolic link, not a regular file") from None
        if e.errno == errno.ENXIO:  # a socket (or a device without its driver)
            raise UnreadableFile("it is a socket or device, not a regular file") from None
        raise UnreadableFile(f"cannot open it ({e.strerror})") from None


def _read(fd: int, limit: int, what: str, head: bool) -> bytes:
    chunks: list[bytes] = []
    total = 0
    want = limit if head else limit + 1  # one byte more tells a file that grew
    while total < want:
        chunk = os.read(fd, min(_CHUNK, want - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > limit:  # it grew while we read
        raise UnreadableFile(f"it is more than {limit:,} bytes; {what} is at most {limit:,} bytes")
    return b"".join(chunks)
