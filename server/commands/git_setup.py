"""`planning-mcp git-setup`: what plain `git merge`, `rebase`, `cherry-pick` and `pull` need to
merge committed plans without conflict or loss (docs/git.md): the merge driver in .git/config,
the paths it merges in .gitattributes, the hooks that renumber after a merge, and the merge
notes kept out of commits. Idempotent: a second run changes nothing."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from planning_core.stores.files.historyread import GITIGNORE_LINE
from planning_core.stores.files.merge.gitmerge import DRIVER_NAME, HOOKS, PENDING, PENDING_PLANS
from planning_core.stores.files.taskfiles import HIGHWATERMARK, MERGE_NOTES, PLAN_MD

from ..common.cli_common import EXIT_CONFIG, EXIT_OK, add_store_arguments
from ..common.store_choice import StoreChoice

MARK = "# planning-mcp git-setup"
MODULE = "planning_core.stores.files"


class GitSetupError(Exception):
    """One line: why the set-up cannot run here, and what to do."""


def add_git_setup_parser(sub: Any) -> None:
    g = sub.add_parser(
        "git-setup",
        help="set up this git repository so committed plans merge without conflicts (idempotent)",
    )
    add_store_arguments(g)
    g.set_defaults(run=lambda _args, choice: run_git_setup(choice))


def _git(top: Path | None, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=top, capture_output=True, text=True)
    if done.returncode:
        raise GitSetupError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"git {args[0]} failed")
    return done.stdout.strip()


# How git starts Python for the driver and the hooks. git runs them in the work tree's top
# folder, and `python -m` would put that folder first on sys.path, so a `planning_core/`
# committed there would be imported instead of the installed one: -P leaves it out and -E
# ignores PYTHONPATH (whose empty or relative entries name the work tree too). Not -I: that
# would also drop a `pip install --user`. The installed package is found as a plain or an
# editable install puts it (site-packages, its .pth files and finders).
SAFE_FLAGS = ("-E", "-P")


def _python() -> str:
    return " ".join(shlex.quote(x) for x in (sys.executable, *SAFE_FLAGS))


def _module_command(*args: str) -> str:
    return f"{_python()} -m {MODULE} {' '.join(args)}"


def _check_installed() -> None:
    """The package must import the way git will start it, from a folder that holds nothing."""
    probe = [sys.executable, *SAFE_FLAGS, "-c", f"import {MODULE}"]
    done = subprocess.run(probe, cwd=os.path.dirname(sys.executable) or "/", capture_output=True, text=True)
    if done.returncode:
        raise GitSetupError(
            f"{sys.executable} cannot import planning-mcp without PYTHONPATH or the current folder;"
            " install it (pip install planning-mcp, or pip install -e . for a checkout) and run git-setup again"
        )


def attribute_lines(rel: str) -> list[str]:
    prefix = "" if rel in ("", ".") else rel.rstrip("/") + "/"
    return [
        f"{prefix}**/task_*.json merge={DRIVER_NAME}",
        f"{prefix}**/{HIGHWATERMARK} merge={DRIVER_NAME}",
        f"{prefix}**/{PLAN_MD} merge=union",
    ]


def _add_lines(path: Path, lines: list[str], header: str) -> bool:
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    have = set(text.splitlines())
    missing = [line for line in lines if line not in have]
    if not missing:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    lead = "" if not text or text.endswith("\n") else "\n"
    path.write_text(text + lead + "\n".join([header, *missing]) + "\n", encoding="utf-8")
    return True


def _hook_line(name: str) -> str:
    # The shell looks for a merge to fix first: every commit runs the hook, and starting
    # Python for nothing would slow each one.
    marker = f'"$(git rev-parse --absolute-git-dir)/{PENDING}/{PENDING_PLANS}"'
    command = _module_command("hook", name, '"$@"')
    return f"[ ! -f {marker} ] || {command} {MARK}"


def _install_hook(path: Path, name: str) -> bool:
    """Our line in the hook, keeping whatever else the hook does."""
    line = _hook_line(name)
    if path.is_file():
        lines = path.read_text(encoding="utf-8").splitlines()
        if line in lines:
            return False
        kept = [x for x in lines if not x.endswith(MARK)]
        text = "\n".join([*kept, line]) + "\n"
    else:
        text = f"#!/bin/sh\n{line}\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.chmod(path, 0o755)
    return True


STRATEGY = "planning-mcp"  # git runs git-merge-planning-mcp (a console script of this package)
# What an earlier git-setup set, and no longer does: git refuses every merge, fast-forwards
# included, in a shell, IDE or CI without git-merge-planning-mcp on PATH when pull.twohead or
# pull.octopus names it. The strategy is asked for by name instead (`git merge -s planning-mcp`).
OLD_STRATEGIES = {"pull.octopus": STRATEGY, "pull.twohead": f"ort {STRATEGY}"}


def _drop_old_strategies(top: Path) -> list[str]:
    """Unset the strategy settings an earlier git-setup made; anyone else's are left alone."""
    done = []
    for key, value in OLD_STRATEGIES.items():
        try:
            current: str | None = _git(top, "config", "--local", "--get", key)
        except GitSetupError:
            current = None
        if current == value:
            _git(top, "config", "--local", "--unset", key)
            done.append(f"git config --unset {key} (it made git fail where planning-mcp is not on PATH)")
    return done


def _plans_in_repo(root: Path, top: Path) -> str:
    """Where the plans are inside the repository, as .gitattributes names them. In a linked
    worktree the default plans are the main working tree's: the same path from its top."""
    common = Path(_git(top, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    for tree in (top.resolve(), common.parent.resolve()):
        if root.is_relative_to(tree):
            return root.relative_to(tree).as_posix()
    raise GitSetupError(f"the plans ({root}) are not inside this repository ({top}); pass --root")


def git_setup(choice: StoreChoice, cwd: Path | None = None) -> list[str]:
    """Set up the repository around `cwd`; the lines say what changed (none: all was there)."""
    if choice.folder is None:
        raise GitSetupError("git-setup is for plans kept in files (--root DIR), not in a database")
    where = cwd or Path.cwd()
    try:
        top = Path(_git(where, "rev-parse", "--show-toplevel"))
    except (GitSetupError, OSError) as e:
        raise GitSetupError(f"run git-setup inside a git working tree ({e})") from None
    rel = _plans_in_repo(choice.folder.resolve(), top)
    done: list[str] = []
    _check_installed()
    driver = _module_command("driver", "%O", "%A", "%B", "%P")
    for key, value in (
        (f"merge.{DRIVER_NAME}.name", "planning-mcp task files"),
        (f"merge.{DRIVER_NAME}.driver", driver),
    ):
        try:
            current = _git(top, "config", "--local", "--get", key)
        except GitSetupError:
            current = None
        if current != value:
            _git(top, "config", "--local", key, value)
            done.append(f"git config {key}")
    done += _drop_old_strategies(top)
    if _add_lines(top / ".gitattributes", attribute_lines(rel), "# planning-mcp: plans merge without conflicts"):
        done.append(f"{top / '.gitattributes'}: the plans' merge rules (commit it)")
    hooks = Path(_git(top, "rev-parse", "--path-format=absolute", "--git-path", "hooks"))
    for name in HOOKS:
        if _install_hook(hooks / name, name):
            done.append(f"hook {hooks / name}")
    exclude = Path(_git(top, "rev-parse", "--path-format=absolute", "--git-path", "info/exclude"))
    if _add_lines(exclude, [MERGE_NOTES], "# planning-mcp: merge notes are read once by the server"):
        done.append(f"{exclude}: {MERGE_NOTES}")
    # The plans' history is one machine's log (the store's .gitignore says so for a root made
    # since; this covers the roots made before): never committed, so never merged.
    history = f"/{rel.strip('/')}/**/{GITIGNORE_LINE}" if rel not in ("", ".") else f"**/{GITIGNORE_LINE}"
    if _add_lines(exclude, [history], "# planning-mcp: each machine's history of its plans"):
        done.append(f"{exclude}: {history}")
    return done


def run_git_setup(choice: StoreChoice) -> int:
    try:
        done = git_setup(choice)
    except (GitSetupError, OSError) as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return EXIT_CONFIG
    if done:
        print("planning-mcp git-setup:")
        print("\n".join(f"  {line}" for line in done))
    else:
        print("planning-mcp git-setup: already set up; nothing changed")
    return EXIT_OK
