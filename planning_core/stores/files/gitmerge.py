"""Committed plans that merge: git's merge driver for task files and `.highwatermark`, and
the fix-up a git hook runs after the merge, rebase or cherry-pick that used it.

It works on the committed file layout (a plan folder's task files) directly, as raw JSON objects, so every
field a task file holds (extra ones too) is kept as it was: git runs it on temporary copies
of three versions of one file, and on the working tree after the commit. It imports only the
file-format rules (taskfiles) and the crash-safe write (planning_core/fileio/atomic.py).

The rules (docs/git.md says them for users):
- A task edited on both sides: each field takes the side that changed it; changed on both,
  the side with the later `updatedAt` wins (ours on a tie) and the other value is kept in
  the task's metadata under MERGE_KEPT. `blockedBy`/`blocks` take both sides' additions and
  removals; metadata keys merge one by one by the same rule.
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
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...fileio.atomic import replace_many
from ...taskdoc import task_filename
from .planlock import LockTimeout, LockUnavailable, plan_lock
from .taskfiles import HIGHWATERMARK, LOCK, MAX_TASK_FILE_BYTES, MERGE_NOTES, TASK_FILE

DRIVER_NAME = "planning-mcp"
INCOMING = "mergeIncoming"  # top-level field: the other side's tasks with this id, not yet renumbered
INCOMING_BRANCH = "mergeBranch"  # inside an INCOMING task: where it came from, when git said
MERGED_FROM = "mergedFrom"  # metadata: {"id": old id, "branch": ...} of a renumbered task
MERGE_KEPT = "mergeKept"  # metadata: field -> the losing side's value, with its updatedAt
MERGE_DROPPED = "mergeDroppedBlockedBy"  # metadata: blockers dropped to break a cycle
PENDING = "planning-mcp-merge"  # under the git directory: plans to fix, other sides' versions
PENDING_PLANS = "plans"  # in PENDING: the plan folders a driver merged, one a line
MERGING = "PLANNING_MCP_MERGING"  # set by our strategy for the driver: the branch merged in
EDGES = ("blockedBy", "blocks")
Doc = dict[str, Any]


# ---------------------------------------------------------------- the merge driver


def _read_doc(path: str) -> Doc | bytes | None:
    """A task file's JSON object; None for an empty or missing file (git's base of an add/add);
    the raw bytes when they are not a task object (kept as they are)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_TASK_FILE_BYTES + 1)
    except FileNotFoundError:
        return None
    if not raw.strip():
        return None
    try:
        doc = json.loads(raw) if len(raw) <= MAX_TASK_FILE_BYTES else None
    except (ValueError, RecursionError):
        return raw
    if not isinstance(doc, dict) or not isinstance(doc.get("id"), int):
        return raw
    return doc


def task_text(doc: Doc) -> bytes:
    """A task file's bytes, as the store writes them (Task.to_json)."""
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode()


def _later(ours: Doc, theirs: Doc) -> bool:
    """Whether theirs wins a field both sides changed: the later updatedAt (ISO UTC texts
    compare as times); ours on a tie."""
    return str(theirs.get("updatedAt", "")) > str(ours.get("updatedAt", ""))


def _merge_ids(base: list[Any], ours: list[Any], theirs: list[Any]) -> list[Any]:
    removed = (set(base) - set(ours)) | (set(base) - set(theirs))
    merged = {*ours, *theirs} - removed
    return sorted(i for i in merged if isinstance(i, int))


def _kept(doc: Doc, name: str, loser: Doc, value: Any, branch: str | None) -> None:
    meta = doc.setdefault("metadata", {})
    if not isinstance(meta, dict):
        return
    kept = meta.setdefault(MERGE_KEPT, {})
    entry = {"value": value, "updatedAt": loser.get("updatedAt", "")}
    if branch:
        entry["branch"] = branch
    kept[name] = entry


def merge_task(base: Doc, ours: Doc, theirs: Doc, branch: str | None = None) -> Doc:
    """One task changed on both sides (the rules in the module's text)."""
    theirs_win = _later(ours, theirs)
    winner, loser = (theirs, ours) if theirs_win else (ours, theirs)
    merged: Doc = dict(ours)
    losses: list[tuple[str, Any]] = []
    for key in [*ours, *(k for k in theirs if k not in ours)]:
        if key in ("id", INCOMING):
            continue
        b, o, t = base.get(key), ours.get(key), theirs.get(key)
        if key in EDGES:
            merged[key] = _merge_ids(*(v if isinstance(v, list) else [] for v in (b, o, t)))
        elif key == "updatedAt":
            merged[key] = max(str(o or ""), str(t or ""))
        elif key == "metadata" and all(isinstance(v, dict) or v is None for v in (b, o, t)):
            merged[key], lost = _merge_metadata(b or {}, o or {}, t or {}, theirs_win)
            losses += [(f"metadata.{k}", v) for k, v in lost]
        elif o in (b, t):
            _put(merged, key, t, key in theirs)
        elif t == b:
            _put(merged, key, o, key in ours)
        else:
            _put(merged, key, winner.get(key), key in winner)
            losses.append((key, loser.get(key)))
    for name, value in losses:
        _kept(merged, name, loser, value, branch if loser is theirs else None)
    return merged


def _put(doc: Doc, key: str, value: Any, present: bool) -> None:
    if present:
        doc[key] = value
    else:
        doc.pop(key, None)


def _merge_metadata(base: Doc, ours: Doc, theirs: Doc, theirs_win: bool) -> tuple[Doc, list[tuple[str, Any]]]:
    merged: Doc = {}
    lost: list[tuple[str, Any]] = []
    for key in [*ours, *(k for k in theirs if k not in ours), *(k for k in base if k not in ours and k not in theirs)]:
        b, o, t = base.get(key), ours.get(key), theirs.get(key)
        if o in (b, t):
            value, present = t, key in theirs
        elif t == b:
            value, present = o, key in ours
        else:
            value, present = (t, key in theirs) if theirs_win else (o, key in ours)
            lost.append((key, o if theirs_win else t))
        if present:
            merged[key] = value
    return merged, lost


def _same_task(a: Doc, b: Doc) -> bool:
    """Whether two versions with one id are one task: made at the same moment with the same
    subject (the stamp is to the second, so two branches can make two tasks in one second)."""
    created = a.get("createdAt")
    return bool(created) and created == b.get("createdAt") and a.get("subject") == b.get("subject")


def _without(doc: Doc, *keys: str) -> Doc:
    return {k: v for k, v in doc.items() if k not in keys}


def _incoming(doc: Doc) -> list[Doc]:
    parked = doc.get(INCOMING)
    return [d for d in parked if isinstance(d, dict)] if isinstance(parked, list) else []


def merge_task_file(base: Doc | None, ours: Doc, theirs: Doc, branch: str | None) -> tuple[Doc, bool]:
    """The merged file and whether a task was parked for renumbering."""
    parked = _incoming(ours)
    top = _without(ours, INCOMING)
    theirs_parked = _incoming(theirs)
    theirs_top = _without(theirs, INCOMING)
    if base is not None:
        base = _without(base, INCOMING)
        # A later commit of a rebased branch edits the task parked by an earlier one: merge into it.
        for i, other in enumerate(parked):
            if _without(other, INCOMING_BRANCH) == base or (_same_task(other, base) and not _same_task(top, base)):
                parked[i] = {**merge_task(base, _without(other, INCOMING_BRANCH), theirs_top, branch)}
                if INCOMING_BRANCH in other:
                    parked[i][INCOMING_BRANCH] = other[INCOMING_BRANCH]
                return _with_incoming(top, parked), True
    if top == theirs_top:
        merged = top
    elif base is not None or _same_task(top, theirs_top):
        merged = merge_task(base or {}, top, theirs_top, branch)
    else:
        newcomer = dict(theirs_top)
        if branch:
            newcomer[INCOMING_BRANCH] = branch
        parked.append(newcomer)
        merged = top
    known = {json.dumps(d, sort_keys=True) for d in parked}
    parked += [d for d in theirs_parked if json.dumps(d, sort_keys=True) not in known]
    return _with_incoming(merged, parked), bool(parked)


def _with_incoming(top: Doc, parked: list[Doc]) -> Doc:
    return {**top, INCOMING: parked} if parked else top


def _hwm_value(path: str) -> int | None:
    try:
        with open(path, "rb") as f:
            return int(f.read(64).strip() or b"0")
    except (OSError, ValueError):
        return None


def _branch_label() -> str | None:
    """The branch being merged in, when known: our strategy says (MERGING), else git (it sets
    GITHEAD_<commit> for each head of a `git merge`)."""
    if os.environ.get(MERGING):
        return os.environ[MERGING]
    names = [v for k, v in os.environ.items() if k.startswith("GITHEAD_") and v != "HEAD"]
    return names[-1] if len(names) == 1 else None


def _by_path_id(path: str, base: Doc | bytes | None, ours: Doc, theirs: Doc) -> tuple[Doc | None, Doc, Doc]:
    """git's rename detection can pair one task's file with another's (a task deleted and a
    similar one created): the version whose id is not the file's is kept whole, parked to go
    back to its own id, and the file is merged from the versions that are this task."""
    m = TASK_FILE.fullmatch(os.path.basename(path))
    file_id = int(m.group(1)) if m else None
    if not isinstance(base, dict) or base.get("id") != file_id:
        base = None
    if ours.get("id") != file_id and theirs.get("id") == file_id:
        parked = [*_incoming(theirs), _without(ours, INCOMING), *_incoming(ours)]
        return None, {**theirs, INCOMING: parked}, theirs
    if theirs.get("id") != file_id:
        parked = [*_incoming(ours), _without(theirs, INCOMING), *_incoming(theirs)]
        return None, ours, {**ours, INCOMING: parked}
    return base, ours, theirs


def run_driver(base_path: str, ours_path: str, theirs_path: str, path: str) -> int:
    """git's merge driver: the result goes into ours_path; 0 when merged."""
    name = os.path.basename(path)
    plan = os.path.dirname(path)
    if name == HIGHWATERMARK:
        values = [v for v in (_hwm_value(p) for p in (base_path, ours_path, theirs_path)) if v is not None]
        if values:
            Path(ours_path).write_text(f"{max(values)}\n")
        _mark_pending(plan)
        return 0
    base, ours, theirs = (_read_doc(p) for p in (base_path, ours_path, theirs_path))
    if theirs is None:
        return 0  # nothing on their side to add
    if ours is None:
        Path(ours_path).write_bytes(Path(theirs_path).read_bytes())
        return 0
    if not isinstance(ours, dict) or not isinstance(theirs, dict):
        # One side is not a task: keep our file as it is (theirs if ours is the valid one,
        # so the hand-edited file is the one left), the other version saved and reported.
        keep_theirs = isinstance(ours, dict)
        other = ours_path if keep_theirs else theirs_path
        saved = _save_other(path, other, "ours" if keep_theirs else "theirs")
        if keep_theirs:
            Path(ours_path).write_bytes(Path(theirs_path).read_bytes())
        _mark_pending(plan, f"{path}: not a valid task file on one side; kept as it is, the other version in {saved}")
        return 0
    merged, parked = merge_task_file(*_by_path_id(path, base, ours, theirs), _branch_label())
    # git's own temporary file, read back by git: no need for the store's crash-safe write.
    Path(ours_path).write_bytes(task_text(merged))
    if parked or merged.get("blockedBy") != ours.get("blockedBy"):
        _mark_pending(plan)
    return 0


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
        f.write(plan + "\n")
    if note:
        with open(folder / "notes", "a", encoding="utf-8") as f:
            f.write(note + "\n")


def _save_other(path: str, version: str, side: str) -> str:
    target = _pending_dir() / "kept" / f"{path}.{side}"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(Path(version).read_bytes())
    return str(target)


# ---------------------------------------------------------------- the fix-up after a merge


@dataclass
class FixUp:
    """What fix_plan changed in one plan folder."""

    renumbered: list[tuple[int, int, str | None]] = field(default_factory=list)  # old, new, branch
    dropped: list[tuple[int, int]] = field(default_factory=list)  # (task, blocker) dropped to break a cycle
    unreadable: list[str] = field(default_factory=list)  # task files left as they are
    written: list[Path] = field(default_factory=list)

    def lines(self, plan: str) -> list[str]:
        out = []
        if self.renumbered:
            moved = ", ".join(f"#{o} -> #{n}" + (f" (from {b})" if b else "") for o, n, b in self.renumbered)
            out.append(f"plan {plan}: merged tasks renumbered (both branches used these ids): {moved}")
        if self.dropped:
            edges = ", ".join(f"#{t} no longer blocked by #{b}" for t, b in self.dropped)
            out.append(f"plan {plan}: the merge made a dependency cycle; dropped: {edges}")
        out += [f"plan {plan}: {f} is not a valid task file; kept as it is" for f in self.unreadable]
        return out


def _load_folder(folder: Path) -> tuple[dict[int, Doc], set[int], list[str]]:
    docs: dict[int, Doc] = {}
    unreadable: set[int] = set()
    bad: list[str] = []
    for entry in os.scandir(folder):
        m = TASK_FILE.fullmatch(entry.name)
        if not m or not entry.is_file(follow_symlinks=False):
            continue
        task_id = int(m.group(1))
        doc = _read_doc(entry.path)
        if isinstance(doc, dict) and doc.get("id") == task_id:
            docs[task_id] = doc
        else:
            unreadable.add(task_id)
            bad.append(entry.name)
    return docs, unreadable, sorted(bad)


def _ids(doc: Doc, key: str) -> list[int]:
    v = doc.get(key)
    return [i for i in v if isinstance(i, int)] if isinstance(v, list) else []


def _renumber(docs: dict[int, Doc], start: int, branch: str | None, done: FixUp) -> None:
    """Give each parked task the next free id; move the edges that named it on its side."""
    moves: dict[tuple[str | None, int], int] = {}
    parked: list[tuple[int, Doc]] = []
    next_id = start
    for task_id in sorted(docs):
        for newcomer in _incoming(docs[task_id]):
            side = newcomer.pop(INCOMING_BRANCH, None) or branch
            own = newcomer.get("id")
            if isinstance(own, int) and own != task_id and own not in docs and own >= 1:
                docs[own] = newcomer  # git took it for a rename of another file: back to its own
                continue
            next_id += 1
            moves[(side, task_id)] = next_id
            parked.append((task_id, {**newcomer, INCOMING_BRANCH: side}))
        docs[task_id].pop(INCOMING, None)
    for old, newcomer in parked:
        side = newcomer.pop(INCOMING_BRANCH)
        new = moves[(side, old)]
        ours = docs[old]
        for blocked in _ids(newcomer, "blocks"):
            if (side, blocked) in moves or blocked not in docs:
                continue  # a parked task's own edges are moved with it, below
            edges = _ids(docs[blocked], "blockedBy")
            if blocked not in _ids(ours, "blocks"):
                edges = [e for e in edges if e != old]
            docs[blocked]["blockedBy"] = sorted({*edges, new})
        for key in EDGES:
            newcomer[key] = sorted({moves.get((side, i), i) for i in _ids(newcomer, key)})
        newcomer["id"] = new
        meta = newcomer.setdefault("metadata", {})
        if isinstance(meta, dict):
            meta[MERGED_FROM] = {"id": old, "branch": side} if side else {"id": old}
        docs[new] = newcomer
        done.renumbered.append((old, new, side))


def _find_cycle(docs: dict[int, Doc]) -> list[int] | None:
    """A cycle of blockedBy edges, as the ids along it, or None."""
    state: dict[int, int] = {}  # 1 on the path, 2 finished
    for root in sorted(docs):
        if root in state:
            continue
        path: list[int] = []
        stack: list[tuple[int, Iterator[int]]] = [(root, iter(_ids(docs[root], "blockedBy")))]
        state[root] = 1
        path.append(root)
        while stack:
            node, edges = stack[-1]
            nxt = next((e for e in edges if e in docs and state.get(e) != 2), None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[node] = 2
            elif state.get(nxt) == 1:
                return path[path.index(nxt) :]
            else:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(_ids(docs[nxt], "blockedBy"))))
    return None


def _break_cycles(docs: dict[int, Doc], done: FixUp) -> None:
    while (cycle := _find_cycle(docs)) is not None:
        # cycle[i] is blocked by cycle[i + 1]; drop the edge of the highest-numbered task.
        at = cycle.index(max(cycle))
        task, blocker = cycle[at], cycle[(at + 1) % len(cycle)]
        doc = docs[task]
        doc["blockedBy"] = [b for b in _ids(doc, "blockedBy") if b != blocker]
        meta = doc.setdefault("metadata", {})
        if isinstance(meta, dict):
            meta[MERGE_DROPPED] = sorted({*meta.get(MERGE_DROPPED, []), blocker})
        done.dropped.append((task, blocker))


def fix_plan(folder: Path, branch: str | None = None) -> FixUp:
    """Make a merged plan folder whole again (the rules in the module's text)."""
    done = FixUp()
    docs, unreadable, done.unreadable = _load_folder(folder)
    before = {i: task_text(d) for i, d in docs.items()}
    hwm = _hwm_value(str(folder / HIGHWATERMARK)) or 0
    start = max([hwm, *docs, *unreadable])
    _renumber(docs, start, branch, done)
    known = set(docs) | unreadable
    for doc in docs.values():
        doc["blockedBy"] = sorted({b for b in _ids(doc, "blockedBy") if b in known and b != doc["id"]})
    _break_cycles(docs, done)
    blocks: dict[int, set[int]] = {i: set() for i in docs}
    for task_id, doc in docs.items():
        for b in doc["blockedBy"]:
            if b in blocks:  # an unreadable blocker's own list is left as it is
                blocks[b].add(task_id)
    for task_id, doc in docs.items():
        doc["blocks"] = sorted(blocks[task_id] | {i for i in _ids(doc, "blocks") if i in unreadable})
    writes = [(folder / task_filename(i), text) for i, d in docs.items() if (text := task_text(d)) != before.get(i)]
    top = max([hwm, *docs, *unreadable])
    if top != _hwm_value(str(folder / HIGHWATERMARK)):
        writes.append((folder / HIGHWATERMARK, f"{top}\n".encode()))
    replace_many(writes)
    done.written = [Path(p) for p, _ in writes]
    return done


def add_notes(folder: Path, lines: Sequence[str]) -> None:
    """What the fix-up did, for the server to report once (read_notes)."""
    if lines:
        with open(folder / MERGE_NOTES, "a", encoding="utf-8") as f:
            f.writelines(line + "\n" for line in lines)


def take_notes(folder: Path) -> list[str]:
    """The notes a fix-up left in a plan folder, removed once read."""
    path = folder / MERGE_NOTES
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [line.rstrip("\n") for line in f.read(64 * 1024).splitlines() if line.strip()]
        os.unlink(path)
    except FileNotFoundError:
        return []
    return lines


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
    plans_file = pending / PENDING_PLANS
    if not plans_file.is_file():
        return 0
    top = Path(git("rev-parse", "--show-toplevel"))
    plans = sorted(set(plans_file.read_text(encoding="utf-8").split()))
    notes_file = pending / "notes"
    notes = notes_file.read_text(encoding="utf-8").splitlines() if notes_file.is_file() else []
    plans_file.unlink()
    if notes_file.is_file():
        notes_file.unlink()
    branch = _operation_branch(git_dir)
    written: list[str] = []
    for plan in plans:
        folder = top / plan
        if not folder.is_dir():
            continue
        try:
            with plan_lock(folder / LOCK, LOCK_WAIT):  # a server may be writing this plan
                fixed = fix_plan(folder, branch)
        except (LockTimeout, LockUnavailable) as e:
            _mark_pending(plan)  # the next commit tries again
            print(
                f"planning-mcp: plan {folder.name} not fixed after the merge ({e}); it will be at the next commit",
                file=sys.stderr,
            )
            continue
        lines = fixed.lines(folder.name) + [n for n in notes if n.startswith(plan + "/")]
        add_notes(folder, lines)
        for line in lines:
            print(f"planning-mcp: {line}", file=sys.stderr)
        written += [str(p) for p in fixed.written]
    if written:
        git("add", "--", *written, cwd=str(top))
        if not (name == "post-merge" and args[:1] == ["1"]):  # a squash merge made no commit
            _fold_into_head(top)
    return 0


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
    """`git merge -s planning-mcp` (git-setup makes it the octopus strategy and the fallback of
    a two-head merge): each head merged in turn with git's own merge, which uses our driver,
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
