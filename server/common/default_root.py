"""The planning folder a command uses when nothing names one, for the server,
`status`, `board`, `graph`, `watch`, `web` and the Claude Code hook alike.

- Inside a git repository: the `.planning` folder of the repository's main working tree,
  so every linked worktree (`git worktree add`, the agents' worktrees) shares one set of
  plans. Found from the files git keeps, without running git: a linked worktree's `.git`
  is a file naming its git directory (`gitdir: …/.git/worktrees/<name>`), whose
  `commondir` names the repository's `.git`, whose folder is the main working tree.
- Outside git: the nearest existing `.planning` in the working folder or above it, else
  `./.planning`.
- Where git's files lead nowhere we can use (a bare repository, a submodule, a worktree
  whose main tree was moved or deleted, a `.git` file naming nothing), the outside-git
  rule, with a one-line note saying why: never a crash, never a folder made somewhere
  the user did not look.

`--root`, `--store` and $PLANNING_MCP_ROOT / $PLANNING_MCP_STORE win over all of this
(server/common/store_choice.py); `--root ./.planning` is the per-worktree opt-out."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from planning_core.fileio.regular import UnreadableFile, read_regular

PLANNING = ".planning"
GIT = ".git"
MAX_GIT_FILE_BYTES = 4096  # `gitdir: <path>` or a commondir: one path and a newline
_BARE = re.compile(r"^\s*bare\s*=\s*true\s*$", re.IGNORECASE | re.MULTILINE)
REPAIR_HINT = "`git worktree repair` in the moved main worktree mends the link"


@dataclass(frozen=True)
class DefaultRoot:
    folder: Path  # absolute
    why: str  # for the startup line, e.g. "main worktree of /home/me/shop"; "" for ./.planning
    note: str | None = None  # one line for stderr when git's files could not be followed


def default_root(cwd: Path) -> DefaultRoot:
    """The planning folder for a command started in `cwd` (see the module docstring)."""
    cwd = cwd.absolute()
    try:
        return _from_git(cwd)
    except OSError as e:  # a folder above that cannot be looked into
        return _noted(DefaultRoot(cwd / PLANNING, ""), f"cannot look for git's files ({e})")


def _from_git(cwd: Path) -> DefaultRoot:
    for folder in (cwd, *cwd.parents):
        entry = folder / GIT
        if entry.is_dir() or entry.is_file():
            main, problem = _main_worktree(folder)
            if main is not None:
                return DefaultRoot(main / PLANNING, f"main worktree of {main}")
            return _outside_git(cwd, f"{entry}: {problem}")
        if _is_git_directory(folder) and _is_bare(folder):  # (inside a .git folder: go on up)
            return _outside_git(cwd, f"{folder} is a bare git repository (no working tree to keep plans in)")
    return _outside_git(cwd, None)


def _outside_git(cwd: Path, problem: str | None) -> DefaultRoot:
    for folder in (cwd, *cwd.parents):
        if (folder / PLANNING).is_dir():
            why = "" if folder == cwd else f"the nearest {PLANNING} above {cwd}"
            return _noted(DefaultRoot(folder / PLANNING, why), problem)
    return _noted(DefaultRoot(cwd / PLANNING, ""), problem)


def _noted(root: DefaultRoot, problem: str | None) -> DefaultRoot:
    if problem is None:
        return root
    note = f"{problem}; plans in {root.folder} (pass --root DIR to choose)"
    return DefaultRoot(root.folder, root.why, note)


def _main_worktree(top: Path) -> tuple[Path | None, str]:
    """The main working tree of the repository whose working tree is `top`, or None and
    why not. `top/.git` is a directory (the main tree itself) or a file (a link)."""
    entry = top / GIT
    if entry.is_dir():
        if not (entry / "HEAD").is_file():
            return None, "a folder that is not a git directory (no HEAD)"
        return top, ""
    gitdir = _linked_path(entry, "gitdir: ")
    if gitdir is None:
        return None, "not a `gitdir: <path>` link"
    if not gitdir.is_dir():
        return None, f"names {gitdir}, which does not exist (was the main worktree moved or deleted? {REPAIR_HINT})"
    common = _linked_path(gitdir / "commondir", "")
    if common is None:
        return None, f"links to {gitdir}, a submodule's or a separate git directory, not a linked worktree"
    return _main_of_common(common)


def _main_of_common(common: Path) -> tuple[Path | None, str]:
    """The working tree a repository's common git directory belongs to."""
    if not (common / "HEAD").is_file():
        return None, f"its repository {common} does not exist (was the main worktree moved or deleted? {REPAIR_HINT})"
    if _is_bare(common):
        return None, f"a worktree of the bare repository {common}, which has no main working tree"
    main = common.parent
    if common.name != GIT or not (main / GIT).is_dir() or not (main / GIT).samefile(common):
        return None, f"the main working tree of {common} is not the folder holding it"
    return main, ""


def _linked_path(path: Path, prefix: str) -> Path | None:
    """The path a one-line git file names (relative to the file's folder), or None."""
    try:
        text = read_regular(path, MAX_GIT_FILE_BYTES, "a git link file").decode("utf-8").strip()
    except (OSError, UnreadableFile, UnicodeDecodeError):
        return None
    if not text.startswith(prefix) or "\n" in text or "\0" in text or len(text) == len(prefix):
        return None
    named = path.parent / text[len(prefix) :]
    try:
        return named.resolve()
    except (OSError, RuntimeError):  # a symbolic link loop (RuntimeError before Python 3.13)
        return named  # as written: what follows finds nothing there and says so


def _is_git_directory(folder: Path) -> bool:
    return (folder / "HEAD").is_file() and (folder / "objects").is_dir() and (folder / "refs").is_dir()


def _is_bare(common: Path) -> bool:
    try:
        config = read_regular(common / "config", 1 << 20, "a git config").decode("utf-8", "replace")
    except (OSError, UnreadableFile):
        return False
    return bool(_BARE.search(config))
