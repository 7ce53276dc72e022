"""The Claude Code hook's per-session state files in <root>/.hooks, never through a link.

A repository is untrusted: a committed `.hooks` that is a symbolic link (to ~ or ~/.ssh)
is checked out whatever .gitignore says, and a hook that followed it would read, write
and delete files far outside the project. So every step goes by descriptor: the root
is opened once, `.hooks` is opened in it with O_NOFOLLOW | O_DIRECTORY (a link there is
refused: HookFolderRefused), and each read, write, lock and removal names a file in
that open folder (dir_fd), so no link on the way is followed and no file is reached
through one. The sweep removes only the hook's own files (STATE_FILE names: what
session_name() makes, their lock and temp files), never anything else put there.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from planning_core.fileio.atomic import TEMP_SUFFIX, replace_in
from planning_core.fileio.regular import UnreadableFile, read_regular
from planning_core.store import HOOKS_DIR

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

STALE_AFTER = 7 * 24 * 3600  # session files older than this are removed at SessionStart
LOCK_TIMEOUT = 2.0
MAX_STATE_BYTES = 64 * 1024  # a state file holds a few short fields; more is not ours
STATE_SUFFIX = ".json"
LOCK_SUFFIX = ".lock"
_NAME_CHARS = 80  # of a session id kept in its file's name; a longer or odd id adds a hash
_HASH_CHARS = 12
# The names session_name() makes, and the lock and temp files (fileio.atomic.temp_name:
# .<name>.<pid>.<hex>.tmp) beside them: the only files the sweep may remove.
STATE_FILE = re.compile(
    rf"(?:[A-Za-z0-9_-]{{1,{_NAME_CHARS}}}(?:-[0-9a-f]{{{_HASH_CHARS}}})?{re.escape(STATE_SUFFIX)}"
    rf"(?:{re.escape(LOCK_SUFFIX)})?"
    rf"|\.[A-Za-z0-9_-]{{1,{_NAME_CHARS}}}(?:-[0-9a-f]{{{_HASH_CHARS}}})?{re.escape(STATE_SUFFIX)}"
    rf"\.[0-9]+\.[0-9a-f]+{re.escape(TEMP_SUFFIX)})"
)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class HookFolderRefused(OSError):
    """<root>/.hooks is not a plain folder (a symbolic link, a file): never used."""


def session_name(session_id: str) -> str:
    """The state file's name for a Claude Code session id (any text): safe characters
    only; an id that had others, or was longer, gets a hash of itself."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", session_id)[:_NAME_CHARS]
    if safe != session_id:
        import hashlib  # here: Claude Code's session ids are all safe characters

        safe += "-" + hashlib.sha256(session_id.encode()).hexdigest()[:_HASH_CHARS]
    return safe + STATE_SUFFIX


@contextlib.contextmanager
def hooks_folder(root: Path, *, create: bool) -> Iterator[int]:
    """A descriptor of <root>/.hooks, opened without following a link (the root itself
    is the user's choice and may be one). FileNotFoundError: it is missing and not
    `create`; HookFolderRefused: it is a link or not a folder."""
    root_fd = os.open(root, _DIR_FLAGS)
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(HOOKS_DIR, 0o755, dir_fd=root_fd)
        try:
            fd = os.open(HOOKS_DIR, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=root_fd)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR):
                why = f"{root / HOOKS_DIR} is not a plain folder (a link?): not used"
                raise HookFolderRefused(e.errno, why) from None
            raise
    finally:
        os.close(root_fd)
    try:
        yield fd
    finally:
        os.close(fd)


def sweep(root: Path, now: float | None = None) -> None:
    """Remove the hook's own files untouched for STALE_AFTER; nothing else, and nothing
    when .hooks is missing or not a plain folder."""
    cutoff = (time.time() if now is None else now) - STALE_AFTER
    with contextlib.suppress(OSError), hooks_folder(root, create=False) as fd, os.scandir(fd) as entries:
        for entry in entries:
            if not STATE_FILE.fullmatch(entry.name):
                continue
            with contextlib.suppress(OSError):
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                    os.unlink(entry.name, dir_fd=fd)


def exists(root: Path, session_id: str) -> bool:
    """A state file for this session is there (a plain file in a plain .hooks)."""
    try:
        with hooks_folder(root, create=False) as fd:
            return stat.S_ISREG(os.lstat(session_name(session_id), dir_fd=fd).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def state_file(root: Path, session_id: str) -> Iterator[dict[str, Any]]:
    """The session's state, locked for the block and saved when it ends (fitted())."""
    name = session_name(session_id)
    with hooks_folder(root, create=True) as fd, _locked(fd, name + LOCK_SUFFIX):
        state = _load(fd, name)
        yield state
        replace_in(fd, name, fitted(state))


def fitted(state: dict[str, Any]) -> bytes:
    """The state as saved, within MAX_STATE_BYTES (a bigger one would be read back as
    nothing, and the session's count, current plan and plans made would all be lost): the
    oldest entries of its growing collections (plans made in plan mode, owners; oldest
    first) go first, then its longest field; never the whole."""
    state = dict(state)
    while True:
        data = (json.dumps(state, ensure_ascii=False) + "\n").encode()
        if len(data) <= MAX_STATE_BYTES or not state:
            return data
        grown = [k for k, v in state.items() if isinstance(v, dict | list) and v]
        if grown:
            key = max(grown, key=lambda k: len(json.dumps(state[k])))
            kept = state[key]
            state[key] = dict(list(kept.items())[1:]) if isinstance(kept, dict) else kept[1:]
        else:
            del state[max(state, key=lambda k: len(json.dumps(state[k])))]


def _load(fd: int, name: str) -> dict[str, Any]:
    try:
        data = json.loads(read_regular(name, MAX_STATE_BYTES, "a hook state file", dir_fd=fd))
    except (OSError, ValueError, UnreadableFile):  # a FIFO there must not hang Claude Code
        return {}
    return data if isinstance(data, dict) else {}


@contextlib.contextmanager
def _locked(dir_fd: int, name: str) -> Iterator[None]:
    """An exclusive flock on the lock file `name` (created, never through a link),
    waited for at most LOCK_TIMEOUT (then TimeoutError: the hook fails open)."""
    fd = os.open(name, _LOCK_FLAGS, 0o644, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise HookFolderRefused(errno.EINVAL, f"{name} is not a plain file")
        if fcntl is not None:
            _flock(fd)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _flock(fd: int) -> None:
    deadline = time.monotonic() + LOCK_TIMEOUT
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise TimeoutError("the hook's session state stayed locked") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
