"""The fix-up of a plan folder after a merge that used the driver (gitmerge.py's text says
the rules): parked tasks renumbered, edges to tasks with no file dropped, cycles broken,
blocks mirrored from blockedBy, the high-water mark at least every id; and the notes
saying what changed, which the server reports once."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ....fileio.atomic import replace_many
from ....fileio.regular import UnreadableFile, read_regular
from ....names import MAX_TASK_ID
from ....safetext import escape
from ....taskdoc import task_filename
from ..taskfiles import HIGHWATERMARK, MERGE_NOTES, TASK_FILE
from .taskmerge import (
    EDGES,
    INCOMING,
    INCOMING_BRANCH,
    MERGE_DROPPED,
    MERGED_FROM,
    Doc,
    incoming,
    mark_value,
    read_doc,
    task_text,
)


@dataclass
class FixUp:
    """What fix_plan changed in one plan folder."""

    renumbered: list[tuple[int, int, str | None]] = field(default_factory=list)  # old, new, branch
    unplaced: list[tuple[int, str | None]] = field(default_factory=list)  # parked, no id left: (id, branch)
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
        for old, side in self.unplaced:
            out.append(
                f"plan {plan}: a merged task #{old}" + (f" from {side}" if side else "") + " was given no id: "
                f"ids end at {MAX_TASK_ID:,}; it stays parked in {task_filename(old)} ({INCOMING}) until "
                "the plan's ids are below that"
            )
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
        doc = read_doc(entry.path)
        if isinstance(doc, dict) and doc.get("id") == task_id:
            docs[task_id] = doc
        else:
            unreadable.add(task_id)
            bad.append(entry.name)
    return docs, unreadable, sorted(bad)


def ids(doc: Doc, key: str) -> list[int]:
    v = doc.get(key)
    return [i for i in v if isinstance(i, int)] if isinstance(v, list) else []


Moves = dict[tuple[str | None, int], int]  # (branch, parked id) -> its new id


def _unpark(docs: dict[int, Doc], start: int, branch: str | None, done: FixUp) -> tuple[Moves, list[tuple[int, Doc]]]:
    """Take each parked task out of its file and give it the next free id after `start`;
    with none left (an id past the last names no file) it stays parked, and is said."""
    moves: Moves = {}
    parked: list[tuple[int, Doc]] = []
    next_id = start
    for task_id in sorted(docs):
        left = []
        for newcomer in incoming(docs[task_id]):
            side = newcomer.pop(INCOMING_BRANCH, None) or branch
            own = newcomer.get("id")
            if isinstance(own, int) and own != task_id and own not in docs and 1 <= own <= MAX_TASK_ID:
                docs[own] = newcomer  # git took it for a rename of another file: back to its own
            elif next_id >= MAX_TASK_ID:
                left.append({**newcomer, INCOMING_BRANCH: side})
                done.unplaced.append((task_id, side))
            else:
                next_id += 1
                moves[(side, task_id)] = next_id
                parked.append((task_id, {**newcomer, INCOMING_BRANCH: side}))
        docs[task_id].pop(INCOMING, None)
        if left:
            docs[task_id][INCOMING] = left
    return moves, parked


def _renumber(docs: dict[int, Doc], start: int, branch: str | None, done: FixUp) -> None:
    """Give each parked task the next free id; move the edges that named it on its side."""
    moves, parked = _unpark(docs, start, branch, done)
    for old, newcomer in parked:
        side = newcomer.pop(INCOMING_BRANCH)
        new = moves[(side, old)]
        ours = docs[old]
        for blocked in ids(newcomer, "blocks"):
            if (side, blocked) in moves or blocked not in docs:
                continue  # a parked task's own edges are moved with it, below
            edges = ids(docs[blocked], "blockedBy")
            if blocked not in ids(ours, "blocks"):
                edges = [e for e in edges if e != old]
            docs[blocked]["blockedBy"] = sorted({*edges, new})
        for key in EDGES:
            newcomer[key] = sorted({moves.get((side, i), i) for i in ids(newcomer, key)})
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
        stack: list[tuple[int, Iterator[int]]] = [(root, iter(ids(docs[root], "blockedBy")))]
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
                stack.append((nxt, iter(ids(docs[nxt], "blockedBy"))))
    return None


def _break_cycles(docs: dict[int, Doc], done: FixUp) -> None:
    while (cycle := _find_cycle(docs)) is not None:
        # cycle[i] is blocked by cycle[i + 1]; drop the edge of the highest-numbered task.
        at = cycle.index(max(cycle))
        task, blocker = cycle[at], cycle[(at + 1) % len(cycle)]
        doc = docs[task]
        doc["blockedBy"] = [b for b in ids(doc, "blockedBy") if b != blocker]
        meta = doc.setdefault("metadata", {})
        if isinstance(meta, dict):
            meta[MERGE_DROPPED] = sorted({*meta.get(MERGE_DROPPED, []), blocker})
        done.dropped.append((task, blocker))


def fix_plan(folder: Path, branch: str | None = None) -> FixUp:
    """Make a merged plan folder whole again (the rules in the module's text)."""
    done = FixUp()
    docs, unreadable, done.unreadable = _load_folder(folder)
    before = {i: task_text(d) for i, d in docs.items()}
    hwm = mark_value(str(folder / HIGHWATERMARK)) or 0
    start = max([hwm, *docs, *unreadable])
    _renumber(docs, start, branch, done)
    _drop_unknown_blockers(docs, set(docs) | unreadable)
    _break_cycles(docs, done)
    _mirror_blocks(docs, unreadable)
    writes = [(folder / task_filename(i), text) for i, d in docs.items() if (text := task_text(d)) != before.get(i)]
    top = max([hwm, *docs, *unreadable])
    if top != mark_value(str(folder / HIGHWATERMARK)):
        writes.append((folder / HIGHWATERMARK, f"{top}\n".encode()))
    replace_many(writes)
    done.written = [Path(p) for p, _ in writes]
    return done


def _drop_unknown_blockers(docs: dict[int, Doc], known: set[int]) -> None:
    """Each task's blockedBy keeps only tasks of the folder (readable or not), never itself."""
    for doc in docs.values():
        doc["blockedBy"] = sorted({b for b in ids(doc, "blockedBy") if b in known and b != doc["id"]})


def _mirror_blocks(docs: dict[int, Doc], unreadable: set[int]) -> None:
    """Each task's blocks made the mirror of the blockedBy lists (links to an unreadable task kept)."""
    blocks: dict[int, set[int]] = {i: set() for i in docs}
    for task_id, doc in docs.items():
        for b in doc["blockedBy"]:
            if b in blocks:  # an unreadable blocker's own list is left as it is
                blocks[b].add(task_id)
    for task_id, doc in docs.items():
        doc["blocks"] = sorted(blocks[task_id] | {i for i in ids(doc, "blocks") if i in unreadable})


MAX_NOTES_BYTES = 64 * 1024  # what the server reads of a plan's notes at start-up
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def add_notes(folder: Path, lines: Sequence[str]) -> bool:
    """What the fix-up did, for the server to report once (take_notes). Appended to a regular
    file only: a `.merge-notes` committed as a link (or a FIFO) is never written through.
    False when the notes could not be kept there."""
    if not lines:
        return True
    try:
        fd = os.open(folder / MERGE_NOTES, _APPEND, 0o644)
    except OSError:
        return False
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        f.writelines(line + "\n" for line in lines)
    return True


def take_notes(folder: Path) -> list[str]:
    """The notes a fix-up left in a plan folder, escaped for a terminal or the model, and
    removed once read. Never read through a link: such a `.merge-notes` is reported, kept."""
    path = folder / MERGE_NOTES
    try:
        raw = read_regular(path, MAX_NOTES_BYTES, head=True)
    except FileNotFoundError:
        return []
    except (UnreadableFile, OSError) as e:
        return [escape(f"plan {folder.name}: {MERGE_NOTES} not read: {getattr(e, 'reason', e)}")]
    os.unlink(path)
    text = raw.decode("utf-8", errors="replace")
    return [escape(line) for line in text.splitlines() if line.strip()]
