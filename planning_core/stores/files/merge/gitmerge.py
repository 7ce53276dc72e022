"""Committed plans that merge: git's merge driver for task files and `.highwatermark`, the
fix-up a git hook runs after the merge, rebase or cherry-pick that used it, and the merge
strategy. This module is what git runs (the driver, the hooks, the strategy, the files
kept under the git directory); the rules are taskmerge.py's (three versions of one file)
and mergefixup.py's (a plan folder after the merge).

They work on the committed file layout directly, as raw JSON objects, so every field a
task file holds (extra ones too) is kept as it was: git runs the driver on temporary
copies of three versions of one file, and the hooks on the working tree after the commit.
They import only the file-format rules (taskfiles) and the crash-safe write
(planning_core/fileio/atomic.py).

The rules (docs/git.md says them for users):
- A task edited on both sides: each field takes the side that changed it; changed on both,
  the side that set it later wins: by the history log when it knows both values' times
  (_changed_at: every change records what it set each field to, history.values_set), else
  by the later `updatedAt` (ours on a tie); the other value is kept in the task's metadata
  under MERGE_KEPT and said in the merge notes. `blockedBy`/`blocks` take both sides'
  additions and removals; metadata keys merge one by one by the same rule (`metadata.<key>`);
  `notes` keep both sides' notes (appended, never replaced), in the order written.
- Both sides created a different task with one id (add/add): the version on the branch merged
  into (ours: the branch checked out for a merge, the new base for a rebase) keeps the id;
  the incoming one is parked in the file (INCOMING) until the hook gives it the next free id
  above the high-water mark, moves the edges that named it on its side, and records the old id
  and branch in its metadata (MERGED_FROM).
- A side whose file is not valid JSON: that file is kept as it is (the store reports it and
  never overwrites it); the other side's version is saved under the git directory and reported.
- `.highwatermark`: the highest of the sides.
- After the fix-up: edges to tasks with no file dropped, cycles broken by dropping the edge of
  the highest-numbered task in the cycle (recorded in MERGE_DROPPED), blocks mirrored from
  blockedBy, the high-water mark at least every id. What changed is written to the plan's
  MERGE_NOTES file, which the server reports once at start-up.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ....history import Event, Logged, value_digest
from ....safetext import escape
from .. import historyread
from ..planlock import LockTimeout, LockUnavailable, plan_lock
from ..taskfiles import HIGHWATERMARK, LOCK, MERGE_NOTES, PLAN_AREAS, TASK_FILE
from .mergefixup import add_notes, fix_plan
from .taskmerge import MERGE_KEPT, ChangedAt, mark_value, merge_task_file, paired_by_id, read_doc, task_text

DRIVER_NAME = "planning-mcp"
PENDING = "planning-mcp-merge"  # under the git directory: plans to fix, other sides' versions
PENDING_PLANS = "plans"  # in PENDING: the plan folders a driver merged, each ended by a NUL
SEPARATOR = "\0"  # the one character no path holds: a folder named `x .. y` stays one folder
MERGING = "PLANNING_MCP_MERGING"  # set by our strategy for the driver: the branch merged in


# ---------------------------------------------------------------- the merge driver


def _branch_label() -> str | None:
    """The branch being merged in, when known: our strategy says (MERGING), else git (it sets
    GITHEAD_<commit> for each head of a `git merge`)."""
    if os.environ.get(MERGING):
        return os.environ[MERGING]
    names = [v for k, v in os.environ.items() if k.startswith("GITHEAD_") and v != "HEAD"]
    return names[-1] if len(names) == 1 else None


def owned(path: str) -> bool:
    """Whether the driver settles this file: a task file or `.highwatermark` of a plan folder
    (`<root>/todo|done/<plan>/`). A `.gitattributes` may send it anything else."""
    parts = path.split("/")
    name_ok = TASK_FILE.fullmatch(parts[-1]) is not None or parts[-1] == HIGHWATERMARK
    return name_ok and len(parts) >= 3 and parts[-3] in PLAN_AREAS


def _git_default_merge(base_path: str, ours_path: str, theirs_path: str) -> int:
    """What git does without a driver: a line merge into ours_path, conflict markers where
    both sides changed the same lines; non-zero leaves the conflict to the user."""
    labels = ("HEAD", "base", _branch_label() or "theirs")
    args = [x for label in labels for x in ("-L", label)]
    done = subprocess.run(["git", "merge-file", *args, ours_path, base_path, theirs_path])
    return 1 if done.returncode else 0


def run_driver(base_path: str, ours_path: str, theirs_path: str, path: str) -> int:
    """git's merge driver: the result goes into ours_path; 0 when merged."""
    if not owned(path):
        return _git_default_merge(base_path, ours_path, theirs_path)
    plan = os.path.dirname(path)
    if os.path.basename(path) == HIGHWATERMARK:
        _merge_mark(base_path, ours_path, theirs_path)
        _mark_pending(plan)
        return 0
    base, ours, theirs = (read_doc(p) for p in (base_path, ours_path, theirs_path))
    if theirs is None:
        return 0  # nothing on their side to add
    if ours is None:
        Path(ours_path).write_bytes(Path(theirs_path).read_bytes())
        return 0
    if not isinstance(ours, dict) or not isinstance(theirs, dict):
        _keep_the_invalid_one(path, ours_path, theirs_path, keep_theirs=isinstance(ours, dict))
        return 0
    branch = _branch_label()
    merged, parked, kept = merge_task_file(*paired_by_id(path, base, ours, theirs), branch, _changed_at(path))
    # git's own temporary file, read back by git: no need for the store's crash-safe write.
    Path(ours_path).write_bytes(task_text(merged))
    for name, value, aside in kept:
        _mark_pending(
            plan,
            f"{path}: {name} changed on both branches; kept {_shown(value)},"
            f" {_shown(aside)} kept aside in metadata.{MERGE_KEPT}",
        )
    if parked or kept or merged.get("blockedBy") != ours.get("blockedBy"):
        _mark_pending(plan)
    return 0


def _merge_mark(base_path: str, ours_path: str, theirs_path: str) -> None:
    """`.highwatermark`: the highest of the three (an id any side used is never reused)."""
    values = [v for v in (mark_value(p) for p in (base_path, ours_path, theirs_path)) if v is not None]
    if values:
        Path(ours_path).write_text(f"{max(values)}\n")


def _keep_the_invalid_one(path: str, ours_path: str, theirs_path: str, *, keep_theirs: bool) -> None:
    """One side is not a task: keep our file as it is (theirs if ours is the valid one, so the
    hand-edited file is the one left), the other version saved and reported."""
    other = ours_path if keep_theirs else theirs_path
    saved = _save_other(path, other, "ours" if keep_theirs else "theirs")
    if keep_theirs:
        Path(ours_path).write_bytes(Path(theirs_path).read_bytes())
    note = f"{path}: not a valid task file on one side; kept as it is, the other version in {saved}"
    _mark_pending(os.path.dirname(path), note)


SHOWN_CHARS = 60  # of a value in a merge note


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


_UNKNOWN: Any = object()
# Fields whose changes the history log records with the value itself (every other field a
# change set is recorded as a digest of its value: history.values_set).
_LOGGED_VALUES: dict[str, Callable[[Event], Any]] = {
    "status": lambda ev: ev.status[1] if ev.status else _UNKNOWN,
    "owner": lambda ev: ev.owner[1] if ev.owner else _UNKNOWN,
    "subject": lambda ev: ev.subject if ev.op == "created" or "subject" in ev.fields else _UNKNOWN,
}
FIELD_EVENTS = 200  # of one task's newest events (and TASK_EVENTS_SCAN bytes of the log) read


def _sets(key: str, value: Any) -> Callable[[Event], bool]:
    """Whether an event set the task's field `key` (`metadata.<key>` for a metadata key) to `value`."""
    take = _LOGGED_VALUES.get(key)
    if take is not None:
        return lambda ev: take(ev) == value
    digest = value_digest(value)
    return lambda ev: ev.values.get(key) == digest


def _changed_at(path: str) -> ChangedAt:
    """When this machine's history log says a field of the task was last set to a value: the
    plan folder's log in the work tree (both branches' writes when they were made here)."""
    events: list[Logged] | None = None
    m = TASK_FILE.fullmatch(os.path.basename(path))

    def at(key: str, value: Any) -> str | None:
        nonlocal events
        if m is None:
            return None
        if events is None:
            folder = plan_folder(Path.cwd(), os.path.dirname(path))  # git runs a driver in the top folder
            events = (
                []
                if folder is None
                else historyread.task_events("", str(folder), int(m.group(1)), archived=False, limit=FIELD_EVENTS)
            )
        sets = _sets(key, value)
        return next((e.at for e in events if sets(e.event)), None)

    return at


# ---------------------------------------------------------------- the git directory


def git(*args: str, cwd: str | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _pending_dir() -> Path:
    return Path(git("rev-parse", "--absolute-git-dir")) / PENDING


def _mark_pending(plan: str, note: str | None = None) -> None:
    folder = _pending_dir()
    folder.mkdir(exist_ok=True)
    with open(folder / PENDING_PLANS, "a", encoding="utf-8") as f:
        f.write(plan + SEPARATOR)
    if note:
        with open(folder / "notes", "a", encoding="utf-8") as f:
            f.write(note + SEPARATOR)


def _save_other(path: str, version: str, side: str) -> str:
    target = _pending_dir() / "kept" / f"{path}.{side}"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(Path(version).read_bytes())
    return str(target)


# ---------------------------------------------------------------- the hooks


HOOKS = ("post-merge", "post-commit", "post-rewrite")
SEQUENCES = ("rebase-merge", "rebase-apply", "sequencer")  # a rebase or a series of picks under way
LOCK_WAIT = 30.0  # seconds for a server's write of the plan to finish before the fix-up


def _operation_branch(git_dir: Path) -> str | None:
    """Where the commit just made came from: the merged branch, the rebased branch, or the
    commit cherry-picked (from the reflog's words)."""
    for state in ("rebase-merge", "rebase-apply"):
        head = git_dir / state / "head-name"
        if head.is_file():
            return head.read_text().strip().removeprefix("refs/heads/")
    try:
        said = git("reflog", "-1", "--format=%gs", "HEAD")
    except subprocess.CalledProcessError:
        return None
    if said.startswith("merge "):
        return said.removeprefix("merge ").split(":")[0].strip()
    if said.startswith("cherry-pick"):
        return "cherry-pick of " + git("rev-parse", "--short", "HEAD")
    return None


def run_hook(name: str, args: Sequence[str]) -> int:
    """post-merge, post-commit and post-rewrite (a rebase): fix the plans a merge driver marked,
    then fold the fix into the commit just made, so the history never holds a parked task
    for long."""
    git_dir = Path(git("rev-parse", "--absolute-git-dir"))
    if name == "post-rewrite" and args[:1] != ["rebase"]:
        return 0  # an amend: post-commit ran for it
    if name == "post-commit" and any((git_dir / d).is_dir() for d in SEQUENCES):
        return 0  # the picks of a rebase go on from the commit they made; fixed when it ends
    pending = git_dir / PENDING
    if not (pending / PENDING_PLANS).is_file():
        return 0
    top = Path(git("rev-parse", "--show-toplevel"))
    plans, notes = _take_pending(pending)
    branch = _operation_branch(git_dir)
    written: list[str] = []
    for plan in plans:
        folder = plan_folder(top, plan)
        if folder is not None:
            written += _fix_one(folder, plan, branch, notes)
    if written:
        git("add", "--", *written, cwd=str(top))
        if not (name == "post-merge" and args[:1] == ["1"]):  # a squash merge made no commit
            _fold_into_head(top)
    return 0


def _take_pending(pending: Path) -> tuple[list[str], list[str]]:
    """The plans the driver marked and its notes, taken (the files removed)."""
    plans_file = pending / PENDING_PLANS
    plans = sorted({p for p in plans_file.read_text(encoding="utf-8").split(SEPARATOR) if p})
    notes_file = pending / "notes"
    notes = notes_file.read_text(encoding="utf-8").split(SEPARATOR) if notes_file.is_file() else []
    plans_file.unlink()
    if notes_file.is_file():
        notes_file.unlink()
    return plans, notes


def _fix_one(folder: Path, plan: str, branch: str | None, notes: list[str]) -> list[str]:
    """Fix one marked plan under its lock and tell what was done; the files written."""
    try:
        with plan_lock(folder / LOCK, LOCK_WAIT):  # a server may be writing this plan
            fixed = fix_plan(folder, branch)
    except (LockTimeout, LockUnavailable) as e:
        _mark_pending(plan)  # the next commit tries again, and says the merge's notes then
        for note in (n for n in notes if n.startswith(plan + "/")):
            _mark_pending(plan, note)
        print(
            f"planning-mcp: plan {folder.name} not fixed after the merge ({e}); it will be at the next commit",
            file=sys.stderr,
        )
        return []
    lines = fixed.lines(folder.name) + [n for n in notes if n.startswith(plan + "/")]
    if not add_notes(folder, lines):
        lines.append(f"plan {folder.name}: {MERGE_NOTES} is not a regular file; these notes are only here")
    for line in lines:
        print(f"planning-mcp: {escape(line)}", file=sys.stderr)
    return [str(p) for p in fixed.written]


def plan_folder(top: Path, plan: str) -> Path | None:
    """The plan folder a driver named (a path in the repository), when each folder on the way
    from the top is a real folder, no link: the fix-up never writes through a committed link."""
    parts = plan.split("/")
    if not plan or plan.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return None
    folder = top
    for part in parts:
        folder = folder / part
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return None
        except OSError:
            return None
    return folder


def _fold_into_head(top: Path) -> None:
    """Replace the commit just made by one with the fixed files: same parents, message and
    author. Plumbing, not `commit --amend`, which git refuses while it still records the
    merge (post-merge runs before MERGE_HEAD is removed) and which would run the hooks again."""
    head = git("rev-parse", "HEAD", cwd=str(top))
    tree = git("write-tree", cwd=str(top))
    parents = git("rev-parse", "HEAD^@", cwd=str(top)).split()
    name, email, date, message = git("log", "-1", "--format=%an%x00%ae%x00%ad%x00%B", cwd=str(top)).split("\0", 3)
    env = {**os.environ, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date}
    args = ["git", "commit-tree", tree, *(x for p in parents for x in ("-p", p))]
    new = subprocess.run(args, cwd=top, input=message + "\n", capture_output=True, text=True, env=env, check=True)
    git("update-ref", "-m", "planning-mcp: merged tasks renumbered", "HEAD", new.stdout.strip(), head, cwd=str(top))


# ---------------------------------------------------------------- the merge strategy


def _unmerged() -> dict[str, set[str]]:
    """Paths git could not merge, with the stages it has of each (1 base, 2 ours, 3 theirs)."""
    stages: dict[str, set[str]] = {}
    for line in git("ls-files", "-u", "-z").split("\0"):
        if line:
            info, path = line.split("\t", 1)
            stages.setdefault(path, set()).add(info.split()[2])
    return stages


def _keep_edited(top: Path) -> bool:
    """A task file deleted on one side and edited on the other: keep the edited one (git left
    it in the tree) and say so. True when nothing else is left unmerged."""
    left = False
    for path, stages in _unmerged().items():
        edited_one_side = "1" in stages and len(stages - {"1"}) == 1
        if edited_one_side and TASK_FILE.fullmatch(os.path.basename(path)) and (top / path).is_file():
            git("add", "--", path, cwd=str(top))
            note = f"{path}: deleted on one side and edited on the other; kept"
            _mark_pending(os.path.dirname(path), note)
        else:
            left = True
    return not left


def run_strategy(args: Sequence[str]) -> int:
    """`git merge -s planning-mcp` (asked for by name: an octopus merge, or a task deleted on
    one side and edited on the other): each head merged in turn with git's own merge, which uses our driver,
    and a task deleted on one side and edited on the other kept. 0 merged; 1 conflicts left."""
    if "--" not in args:
        return 2
    cut = list(args).index("--")
    head, remotes = args[cut + 1], list(args[cut + 2 :])
    top = Path(git("rev-parse", "--show-toplevel"))
    current = head
    for i, remote in enumerate(remotes):
        bases = git("merge-base", "--all", current, remote).split()
        label = os.environ.get(f"GITHEAD_{git('rev-parse', remote)}", remote)
        env = {**os.environ, MERGING: label}
        # Without rename detection: git may take a deleted task's file and a new, similar one
        # for a rename (a rename/delete conflict no driver sees); task files are named by id.
        merge = ["git", "merge-recursive", "--no-renames", *bases, "--", current, remote]
        done = subprocess.run(merge, cwd=top, env=env)
        if done.returncode and not _keep_edited(top):
            return 1
        if i + 1 < len(remotes):  # the next head is merged into what is merged so far
            tree = git("write-tree", cwd=str(top))
            made = ["commit-tree", tree, "-p", current, "-p", remote, "-m", "planning-mcp: octopus step"]
            current = git(*made, cwd=str(top))
    return 0
