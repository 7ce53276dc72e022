"""A file store's root: its layout (todo/, done/, the .gitignore that keeps one machine's
files out of git), the checks made before a root is used (creatable, writable, not a
folder of other files), and the plan folders it lists."""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from ...errors import StorageError
from ...fileio import atomic
from ...store import HOOKS_DIR
from . import historyread
from .plainread import list_plans as list_plans
from .stagedfolder import STAGING_PREFIX
from .taskfiles import LOCK

PROBE_PREFIX = ".probe-"
GITIGNORE = ".gitignore"
# A committed .planning/ keeps the plans (plan.md, task_<N>.json, .highwatermark); these are
# one machine's working files, meaningless or harmful anywhere else.
GITIGNORE_TEXT = (
    "# Written by planning-mcp: commit todo/ and done/ (plan.md, task_*.json, .highwatermark),\n"
    "# not these working files of one machine.\n"
    f"{LOCK}\n{HOOKS_DIR}/\n.*{atomic.TEMP_SUFFIX}\n{STAGING_PREFIX}*/\n{PROBE_PREFIX}*\n{historyread.GITIGNORE_LINE}\n"
)
# What a planning root may hold before its layout exists: our own files (a root whose
# todo/ and done/ were removed by hand), nothing of the user's.
OWN_ENTRIES = frozenset({"todo", "done", HOOKS_DIR, GITIGNORE})
SHOWN_ENTRIES = 3  # how many of a folder's other entries a refusal names


def _is_ours_in_passing(name: str) -> bool:
    """A probe or temp file of ours, there for a moment."""
    return name.startswith(PROBE_PREFIX) or atomic.is_temp(name)


def is_real_dir(path: str) -> bool:
    """A folder, not a symbolic link to one (nor anything else)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError as e:  # as Path.is_dir(): missing is "no", a refusal of the disk is raised
        if e.errno in _NOT_THERE:
            return False
        raise


_NOT_THERE = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def check_creatable(root: Path) -> None:
    """A root not there yet: raise StorageError unless its nearest existing folder above
    lets us make it."""
    ancestor = root.parent
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise StorageError(f"the planning root {root}", f"{ancestor} is not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise StorageError(f"the planning root {root}", f"{ancestor} is not writable")


def ensure_writable(root: Path) -> None:
    """Create the layout; raise StorageError if the root cannot be written."""
    try:
        make_layout(root)
        probe = root / f"{PROBE_PREFIX}{os.getpid()}-{secrets.token_hex(3)}"
        atomic.write_synced(probe, b"")
        probe.unlink()
    except OSError as e:
        raise StorageError(f"the planning root {root}", e.strerror or str(e)) from None


def make_layout(root: Path) -> None:
    """todo/, done/ and the .gitignore (written once: the user's own edits stay). OSError
    as the file system raises it."""
    for folder in ((root / "todo"), (root / "done")):
        folder.mkdir(parents=True, exist_ok=True)
    gitignore = root / GITIGNORE
    if not os.path.lexists(gitignore):
        atomic.replace_many([(gitignore, GITIGNORE_TEXT.encode())])


def root_mistake(root: Path, *, creating: bool) -> str | None:
    """See PlanFolders.root_mistake."""
    if creating and not os.path.lexists(root) and not os.path.lexists(root.parent):
        return f"is in a folder that does not exist ({root.parent}; a typo?): create it first or fix the path"
    try:
        names = sorted(e.name for e in os.scandir(root))
    except OSError:  # missing, or not a folder: prepare's or the reader's own error says so
        return None
    if "todo" in names or "done" in names:
        return None
    nested = root / ".planning"
    if (nested / "todo").is_dir() or (nested / "done").is_dir():
        return f"holds no plans, but {nested} does (did you mean {nested}?)"
    others = [n for n in names if n not in OWN_ENTRIES and not _is_ours_in_passing(n)]
    if not others:
        return None
    shown = ", ".join(others[:SHOWN_ENTRIES]) + (", …" if len(others) > SHOWN_ENTRIES else "")
    return (
        f"holds other files ({shown}) and no plans (no todo/ or done/); plans need a folder of their own, e.g. {nested}"
    )
