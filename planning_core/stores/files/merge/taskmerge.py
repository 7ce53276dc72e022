"""Three versions of one task file (or `.highwatermark`) merged into one, by the rules
gitmerge.py's text says: the part of git's merge driver that knows tasks, not git. Files
are raw JSON objects, so every field a task file holds (extra ones too) is kept as it was."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from ....fileio.regular import MAX_HIGHWATERMARK_BYTES, UnreadableFile, read_regular
from ....history import METADATA
from ..taskfiles import MAX_TASK_FILE_BYTES, TASK_FILE

INCOMING = "mergeIncoming"  # top-level field: the other side's tasks with this id, not yet renumbered
INCOMING_BRANCH = "mergeBranch"  # inside an INCOMING task: where it came from, when git said
MERGED_FROM = "mergedFrom"  # metadata: {"id": old id, "branch": ...} of a renumbered task
MERGE_KEPT = "mergeKept"  # metadata: field -> the losing side's value, with its updatedAt
MERGE_DROPPED = "mergeDroppedBlockedBy"  # metadata: blockers dropped to break a cycle
EDGES = ("blockedBy", "blocks")
NOTES = "notes"  # handoff notes: appended on either side, never replaced, so both sides' are kept
Doc = dict[str, Any]


def read_doc(path: str) -> Doc | bytes | None:
    """A task file's JSON object; None for an empty or missing file (git's base of an add/add);
    the raw bytes when they are not a task object (kept as they are)."""
    try:
        raw = read_regular(path, MAX_TASK_FILE_BYTES + 1, head=True)
    except FileNotFoundError:
        return None
    except (OSError, UnreadableFile) as e:
        return f"not a regular file: {e}".encode()
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
    meta = doc.setdefault(METADATA, {})
    if not isinstance(meta, dict):
        return
    kept = meta.setdefault(MERGE_KEPT, {})
    entry = {"value": value, "updatedAt": loser.get("updatedAt", "")}
    if branch:
        entry["branch"] = branch
    kept[name] = entry


# When a field was last set to a value, where known (the plan's history log): (field, value) -> time.
ChangedAt = Callable[[str, Any], str | None]
Kept = tuple[str, Any, Any]  # a field changed on both sides: its name, the value kept, the one kept aside
Loss = tuple[str, Any, Doc]  # a field changed on both sides: its name, the value kept aside, from which side


def _field_theirs_win(key: str, o: Any, t: Any, theirs_win: bool, changed_at: ChangedAt | None) -> bool:
    """Which side a field changed on both sides takes: the side that set its value later, when
    both changes are known; else the side with the later updatedAt (theirs_win)."""
    if changed_at is not None:
        ours_at, theirs_at = changed_at(key, o), changed_at(key, t)
        if ours_at and theirs_at and ours_at != theirs_at:
            return theirs_at > ours_at
    return theirs_win


def merge_task(
    base: Doc, ours: Doc, theirs: Doc, branch: str | None = None, changed_at: ChangedAt | None = None
) -> tuple[Doc, list[Kept]]:
    """One task changed on both sides (the rules in the module's text), and what it kept aside."""
    theirs_win = _later(ours, theirs)
    merged: Doc = dict(ours)
    losses: list[Loss] = []
    for key in [*ours, *(k for k in theirs if k not in ours)]:
        if key not in ("id", INCOMING) and not _notes_merged(merged, key, (base, ours, theirs)):
            losses += _merge_field(merged, key, (base, ours, theirs), theirs_win, changed_at)
    for name, value, loser in losses:
        _kept(merged, name, loser, value, branch if loser is theirs else None)
    return merged, [(name, _value_at(merged, name), value) for name, value, _ in losses]


def _value_at(doc: Doc, name: str) -> Any:
    if name.startswith(f"{METADATA}."):
        meta = doc.get(METADATA)
        return meta.get(name.removeprefix(f"{METADATA}.")) if isinstance(meta, dict) else None
    return doc.get(name)


def _merge_field(
    merged: Doc, key: str, sides: tuple[Doc, Doc, Doc], theirs_win: bool, changed_at: ChangedAt | None
) -> list[Loss]:
    """Field `key` of (base, ours, theirs) merged into `merged`; the losing side's values
    where both sides changed it."""
    base, ours, theirs = sides
    b, o, t = base.get(key), ours.get(key), theirs.get(key)
    if key in EDGES or key == "updatedAt" or (key == METADATA and _all_objects(b, o, t)):
        return _merge_structured(merged, key, sides, theirs_win, changed_at)
    if o in (b, t):
        _put(merged, key, t, key in theirs)
    elif t == b:
        _put(merged, key, o, key in ours)
    else:
        winner, loser = (theirs, ours) if _field_theirs_win(key, o, t, theirs_win, changed_at) else (ours, theirs)
        _put(merged, key, winner.get(key), key in winner)
        return [(key, loser.get(key), loser)]
    return []


def _notes_merged(merged: Doc, key: str, sides: tuple[Doc, Doc, Doc]) -> bool:
    """The notes of (base, ours, theirs) merged into `merged`, when `key` is the notes (lists)."""
    values = [side.get(key) for side in sides]
    if key != NOTES or not all(isinstance(v, list) or v is None for v in values):
        return False
    b, o, t = (v or [] for v in values)
    _put(merged, key, _merge_notes(b, o, t), bool(o or t))
    return True


def _merge_notes(base: list[Any], ours: list[Any], theirs: list[Any]) -> list[Any]:
    """Both sides' notes: ours, then those theirs added, in the order written (by `at`)."""
    added = [n for n in theirs if n not in ours and n not in base]
    return sorted([*ours, *added], key=lambda n: str(n.get("at", "")) if isinstance(n, dict) else "")


def _all_objects(*values: Any) -> bool:
    return all(isinstance(v, dict) or v is None for v in values)


def _merge_structured(
    merged: Doc, key: str, sides: tuple[Doc, Doc, Doc], theirs_win: bool, changed_at: ChangedAt | None
) -> list[Loss]:
    """The fields merged by their own rule: links (every id either side keeps), updatedAt
    (the later), metadata (key by key)."""
    b, o, t = (side.get(key) for side in sides)
    if key in EDGES:
        merged[key] = _merge_ids(*(v if isinstance(v, list) else [] for v in (b, o, t)))
        return []
    if key == "updatedAt":
        merged[key] = max(str(o or ""), str(t or ""))
        return []
    return _merge_metadata(merged, sides, theirs_win, changed_at)


def _put(doc: Doc, key: str, value: Any, present: bool) -> None:
    if present:
        doc[key] = value
    else:
        doc.pop(key, None)


def _merge_metadata(
    merged: Doc, sides: tuple[Doc, Doc, Doc], theirs_win: bool, changed_at: ChangedAt | None
) -> list[Loss]:
    """Metadata key by key, each as a field of its own (`metadata.<key>`): the side that
    changed it, or on both sides the one that set it later."""
    _, ours, theirs = sides
    base_m, ours_m, theirs_m = (side.get(METADATA) or {} for side in sides)
    out: Doc = {}
    losses: list[Loss] = []
    for key in dict.fromkeys([*ours_m, *theirs_m, *base_m]):
        b, o, t = base_m.get(key), ours_m.get(key), theirs_m.get(key)
        if o in (b, t):
            value, present = t, key in theirs_m
        elif t == b:
            value, present = o, key in ours_m
        else:
            name = f"{METADATA}.{key}"
            win = _field_theirs_win(name, o, t, theirs_win, changed_at)
            value, present = (t, key in theirs_m) if win else (o, key in ours_m)
            losses.append((name, o if win else t, ours if win else theirs))
        if present:
            out[key] = value
    merged[METADATA] = out
    return losses


def _same_task(a: Doc, b: Doc) -> bool:
    """Whether two versions with one id are one task: made at the same moment with the same
    subject (the stamp is to the second, so two branches can make two tasks in one second)."""
    created = a.get("createdAt")
    return bool(created) and created == b.get("createdAt") and a.get("subject") == b.get("subject")


def without(doc: Doc, *keys: str) -> Doc:
    return {k: v for k, v in doc.items() if k not in keys}


def incoming(doc: Doc) -> list[Doc]:
    parked = doc.get(INCOMING)
    return [d for d in parked if isinstance(d, dict)] if isinstance(parked, list) else []


def merge_task_file(
    base: Doc | None, ours: Doc, theirs: Doc, branch: str | None, changed_at: ChangedAt | None = None
) -> tuple[Doc, bool, list[Kept]]:
    """The merged file, whether a task was parked for renumbering, and what was kept aside."""
    parked = incoming(ours)
    top = without(ours, INCOMING)
    theirs_parked = incoming(theirs)
    theirs_top = without(theirs, INCOMING)
    if base is not None:
        base = without(base, INCOMING)
        # A later commit of a rebased branch edits the task parked by an earlier one: merge into it.
        for i, other in enumerate(parked):
            if without(other, INCOMING_BRANCH) == base or (_same_task(other, base) and not _same_task(top, base)):
                parked[i], aside = merge_task(base, without(other, INCOMING_BRANCH), theirs_top, branch, changed_at)
                if INCOMING_BRANCH in other:
                    parked[i][INCOMING_BRANCH] = other[INCOMING_BRANCH]
                return _with_incoming(top, parked), True, aside
    kept: list[Kept] = []
    if top == theirs_top:
        merged = top
    elif base is not None or _same_task(top, theirs_top):
        merged, kept = merge_task(base or {}, top, theirs_top, branch, changed_at)
    else:
        newcomer = dict(theirs_top)
        if branch:
            newcomer[INCOMING_BRANCH] = branch
        parked.append(newcomer)
        merged = top
    known = {json.dumps(d, sort_keys=True) for d in parked}
    parked += [d for d in theirs_parked if json.dumps(d, sort_keys=True) not in known]
    return _with_incoming(merged, parked), bool(parked), kept


def _with_incoming(top: Doc, parked: list[Doc]) -> Doc:
    return {**top, INCOMING: parked} if parked else top


def mark_value(path: str) -> int | None:
    try:
        return int(read_regular(path, MAX_HIGHWATERMARK_BYTES).strip() or b"0")
    except (OSError, ValueError, UnreadableFile):
        return None


def paired_by_id(path: str, base: Doc | bytes | None, ours: Doc, theirs: Doc) -> tuple[Doc | None, Doc, Doc]:
    """git's rename detection can pair one task's file with another's (a task deleted and a
    similar one created): the version whose id is not the file's is kept whole, parked to go
    back to its own id, and the file is merged from the versions that are this task."""
    m = TASK_FILE.fullmatch(os.path.basename(path))
    file_id = int(m.group(1)) if m else None
    if not isinstance(base, dict) or base.get("id") != file_id:
        base = None
    if ours.get("id") != file_id and theirs.get("id") == file_id:
        parked = [*incoming(theirs), without(ours, INCOMING), *incoming(ours)]
        return None, {**theirs, INCOMING: parked}, theirs
    if theirs.get("id") != file_id:
        parked = [*incoming(ours), without(theirs, INCOMING), *incoming(theirs)]
        return None, ours, {**ours, INCOMING: parked}
    return base, ours, theirs
