"""Another tool's tasks brought into a plan, and a plan written out as beads JSONL.

A reader (import_formats.py) turns a file into an ImportedPlan: tasks named by the
source's own ids, with dependencies as source ids. This module checks it whole (ids
unique, every dependency present, no cycle, every text within the contract's bounds)
before anything is written, then writes it through the seam in one call: a new plan
(PlanStore.create_plan), or, when the plan is already there, one transaction that
updates it. A task remembers where it came from in `metadata.source` ({"tool", "id",
"status"}); re-importing matches tasks by it, so the same source never makes duplicates.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import safetext, validate
from ..caller import NOBODY
from ..errors import DependencyCycle, InvalidInput, PlanNotFound
from ..models import (
    MAX_DESCRIPTION,
    MAX_LABELS,
    MAX_NOTES,
    MAX_SHORT_TEXT,
    MAX_SUBJECT,
    PlanSnapshot,
    Task,
    TaskStatus,
    is_priority,
    label_problem,
)
from ..names import check_slug, parse_task_id, slugify, today
from ..queries import resolve_plan
from ..rendering.render import render_plan_md
from ..store import PlanStore, PlanTransaction
from ..taskgraph.graph import derive_blocks

MAX_IMPORTED_TASKS = 10_000  # one source; far above a real project's task file
MAX_IMPORTED_LINKS = 5 * MAX_IMPORTED_TASKS  # blockedBy links of one source, all its tasks together
SOURCE_KEY = "source"  # metadata.source: where an imported task came from
# Task Master's priorities by name, on beads' scale (0 the most urgent).
PRIORITY_NAMES = {"critical": 0, "high": 1, "medium": 2, "low": 3}
BEADS_PREFIX = "pm"  # beads ids for exported tasks that did not come from beads: pm-<id>
ELLIPSIS = "…"

P, IP, C = TaskStatus.PENDING, TaskStatus.IN_PROGRESS, TaskStatus.COMPLETED
BEADS_STATUS = {"open": P, "in_progress": IP, "blocked": P, "deferred": P, "closed": C, "pinned": P, "hooked": IP}
BEADS_DEFAULT_STATUS = {P: "open", IP: "in_progress", C: "closed"}
BEADS_DEFAULT_PRIORITY = 2


@dataclass
class ImportedTask:
    source_id: str
    subject: str
    description: str = ""
    status: TaskStatus = TaskStatus.PENDING
    source_status: str = ""  # as the source wrote it, for the way back (export)
    owner: str = ""
    active_form: str = ""
    blocked_by: list[str] = field(default_factory=list)  # source ids
    metadata: dict[str, Any] = field(default_factory=dict)  # priority, labels, type, parent, ...
    notes: list[dict[str, str]] = field(default_factory=list)  # {by, at, text}: beads comments


@dataclass
class ImportedPlan:
    tool: str
    title: str
    tasks: list[ImportedTask]
    tag: str = ""  # a Task Master tag, a Claude Code list: which part of the source


@dataclass
class ImportResult:
    plan: str
    tool: str
    created: bool
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    gone: list[int] = field(default_factory=list)  # imported before, no longer in the source: kept

    def line(self) -> str:
        if self.created:
            return f"imported {self.added} tasks from {self.tool} into the new plan {self.plan}"
        text = (
            f"updated plan {self.plan} from {self.tool}: {self.added} added, "
            f"{self.updated} updated, {self.unchanged} unchanged"
        )
        if self.gone:
            text += "; kept " + ", ".join(f"#{i}" for i in self.gone) + " (no longer in the source)"
        return text


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# -- checking -----------------------------------------------------------------------


def check(plan: ImportedPlan) -> None:
    """Refuse (InvalidInput, naming the tasks) what cannot become a plan as it is."""
    if not plan.tasks:
        raise InvalidInput(f"the {plan.tool} source holds no tasks; nothing was written.")
    if len(plan.tasks) > MAX_IMPORTED_TASKS:
        raise InvalidInput(f"the source holds {len(plan.tasks):,} tasks; at most {MAX_IMPORTED_TASKS:,} are imported.")
    ids: set[str] = set()
    for t in plan.tasks:
        if t.source_id in ids:
            raise InvalidInput(f"the id {t.source_id} is used by two tasks in the source; nothing was written.")
        ids.add(t.source_id)
    links = 0
    for t in plan.tasks:
        t.blocked_by = list(dict.fromkeys(t.blocked_by))
        links += len(t.blocked_by)
        missing = [d for d in t.blocked_by if d not in ids]
        if missing:
            raise InvalidInput(
                f"{t.source_id} depends on {', '.join(missing)}, which the source does not hold; nothing was written."
            )
        _check_texts(t)
    if links > MAX_IMPORTED_LINKS:
        raise InvalidInput(
            f"the source's tasks are blocked by {links:,} links in all; at most {MAX_IMPORTED_LINKS:,} are imported; "
            "nothing was written."
        )
    cycle = find_cycle({t.source_id: t.blocked_by for t in plan.tasks})
    if cycle:
        raise InvalidInput(
            f"the dependencies close a cycle {' -> '.join(cycle)} (each blocked by the next); "
            "remove one of these links in the source; nothing was written."
        )


def _check_texts(t: ImportedTask) -> None:
    """Bounds of the contract; a long title is cut (kept whole in the description)."""
    subject = " ".join(t.subject.split()) or t.source_id
    if len(subject) > MAX_SUBJECT:
        t.description = f"{subject}\n\n{t.description}" if t.description else subject
        subject = subject[: MAX_SUBJECT - 1] + ELLIPSIS
    try:
        t.subject = validate.text(subject, "title", MAX_SUBJECT, required=True)
        t.description = validate.text(t.description, "description", MAX_DESCRIPTION)
        t.owner = validate.text(t.owner, "owner", MAX_SHORT_TEXT)
        t.active_form = validate.text(t.active_form, "activeForm", MAX_SHORT_TEXT)
    except InvalidInput as e:
        raise InvalidInput(
            f"{t.source_id}: {str(e).replace(' Nothing was changed.', '')} Nothing was written."
        ) from None


def find_cycle(deps: dict[str, list[str]]) -> list[str] | None:
    """A cycle along blockedBy, as [a, b, ..., a] (a blocked by b ...), found without
    recursion: a source may chain thousands of tasks."""
    state: dict[str, int] = {}  # 1 = on the path, 2 = done
    for start in deps:
        if start in state:
            continue
        path: list[str] = [start]
        todo: list[Iterator[str]] = [iter(deps.get(start, ()))]
        state[start] = 1
        while todo:
            nxt = next(todo[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                todo.pop()
            elif state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                todo.append(iter(deps.get(nxt, ())))
    return None


# -- writing -------------------------------------------------------------------------


def source_of(task: Task) -> tuple[str, str] | None:
    src = task.metadata.get(SOURCE_KEY)
    if isinstance(src, dict) and isinstance(src.get("tool"), str) and isinstance(src.get("id"), str):
        return src["tool"], src["id"]
    return None


def _metadata(plan: ImportedPlan, t: ImportedTask) -> dict[str, Any]:
    source = {"tool": plan.tool, "id": t.source_id, "status": t.source_status}
    if plan.tag:
        source["tag"] = plan.tag
    meta = {**t.metadata, SOURCE_KEY: source}
    try:
        return validate.metadata(meta)
    except InvalidInput as e:
        raise InvalidInput(f"{t.source_id}: {e} Nothing was written.") from None


def _fields(t: ImportedTask, ids: dict[str, int]) -> dict[str, Any]:
    """The task's priority, labels and parent from what the source says of them (kept in
    metadata too, as before, for an export back): a beads priority 0-4 as it is, a Task
    Master one by name; the labels that are labels; the parent when it was imported too."""
    meta = t.metadata
    priority = meta.get("priority")
    if isinstance(priority, str):
        priority = PRIORITY_NAMES.get(priority.lower())
    if not is_priority(priority):
        priority = None
    given = meta.get("labels")
    labels = (
        [x for x in given if isinstance(x, str) and label_problem(x, "label") is None]
        if isinstance(given, list)
        else []
    )
    source_parent = meta.get("parent")
    parent = ids.get(source_parent) if isinstance(source_parent, str) else None
    return {
        "priority": priority,
        "labels": list(dict.fromkeys(labels))[:MAX_LABELS],
        "parent": parent if parent != ids[t.source_id] else None,
    }


def import_plan(store: PlanStore, plan: ImportedPlan, name: str | None = None, by: str = NOBODY) -> ImportResult:
    """Bring `plan` into the store: into the plan `name` (or, without one, the active
    plan titled as the import is) when it exists, else into a new plan. `by`: the writer
    the history names."""
    check(plan)
    existing = _existing_plan(store, plan, name)
    if existing is None:
        return _create(store, plan, name, by)
    return _update(store, plan, existing, by)


def _existing_plan(store: PlanStore, plan: ImportedPlan, name: str | None) -> str | None:
    if name is None:
        return next((n for n in store.active_plans() if store.title(n) == plan.title), None)
    try:
        return resolve_plan(store, name, None)
    except PlanNotFound:
        return None


def _create(store: PlanStore, plan: ImportedPlan, name: str | None, by: str) -> ImportResult:
    date, slug = today(), slugify(plan.title)
    if name:
        date, slug = (name[:10], name[11:]) if _dated(name) else (date, name)
        slug = check_slug(slug)
    ids = {t.source_id: i for i, t in enumerate(plan.tasks, start=1)}
    now = _now()
    tasks = {
        ids[t.source_id]: Task(
            id=ids[t.source_id],
            subject=t.subject,
            description=t.description,
            status=t.status,
            owner=t.owner,
            active_form=t.active_form,
            blocked_by=[ids[d] for d in t.blocked_by],
            metadata=_metadata(plan, t),
            created_at=now,
            updated_at=now,
            notes=t.notes[-MAX_NOTES:],
            **_fields(t, ids),
        )
        for t in plan.tasks
    }
    derive_blocks(tasks)
    ordered = [tasks[i] for i in sorted(tasks)]
    analysis = f"Imported from {plan.tool}" + (f" ({plan.tag})" if plan.tag else "") + "."
    created = store.create_plan(date, slug, render_plan_md(plan.title, analysis, "", [], ordered), ordered, by)
    return ImportResult(created, plan.tool, created=True, added=len(ordered))


def _dated(name: str) -> bool:
    return len(name) > 11 and name[4] == "-" and name[7] == "-" and name[10] == "-" and name[:4].isdigit()


def _update(store: PlanStore, plan: ImportedPlan, name: str, by: str) -> ImportResult:
    result = ImportResult(name, plan.tool, created=False)
    with store.transaction(name, by) as txn:
        before = txn.snapshot().tasks
        by_source = {source_of(t): i for i, t in before.items() if source_of(t) is not None}
        ids = {t.source_id: by_source.get((plan.tool, t.source_id)) or txn.next_id() for t in plan.tasks}
        imported_ids = set(ids.values())
        after = {i: t.clone() for i, t in before.items()}
        for t in plan.tasks:
            _merge(after, ids[t.source_id], t, plan, ids, imported_ids)
        cycle = find_cycle({str(i): [str(b) for b in t.blocked_by] for i, t in after.items()})
        if cycle:  # a link made in the plan by hand and one from the source close it together
            raise DependencyCycle([parse_task_id(c) for c in cycle])
        derive_blocks(after)
        _write(txn, before, after, imported_ids, result)
        result.gone = sorted(i for k, i in by_source.items() if k and k[0] == plan.tool and i not in imported_ids)
    return result


def _merge(
    after: dict[int, Task], tid: int, t: ImportedTask, plan: ImportedPlan, ids: dict[str, int], imported: set[int]
) -> None:
    """The source's fields over the task (a new one when `tid` is not in the plan);
    links the plan made to tasks not from this source are kept."""
    task = after.get(tid) or Task(id=tid, subject=t.subject)
    kept_links = [b for b in task.blocked_by if b not in imported]
    task.subject, task.description, task.status = t.subject, t.description, t.status
    task.owner, task.active_form = t.owner, t.active_form
    task.blocked_by = sorted({*kept_links, *(ids[d] for d in t.blocked_by)})
    task.metadata = {**task.metadata, **_metadata(plan, t)}
    for name, value in _fields(t, ids).items():
        setattr(task, name, value)
    task.notes = merged_notes(task.notes, t.notes)
    after[tid] = task


def merged_notes(kept: list[dict[str, str]], imported: list[dict[str, str]]) -> list[dict[str, str]]:
    """A task's notes, never replaced: the ones it has, then the imported ones it has not,
    as many as fit under MAX_NOTES."""
    new = [n for n in imported if n not in kept]
    return [*kept, *new[: max(MAX_NOTES - len(kept), 0)]]


def _write(
    txn: PlanTransaction, before: dict[int, Task], after: dict[int, Task], imported: set[int], result: ImportResult
) -> None:
    now = _now()
    for i, task in after.items():
        old = before.get(i)
        if old is not None and old.model_dump(exclude={"blocks"}) == task.model_dump(exclude={"blocks"}):
            if old.blocks != task.blocks:
                txn.put(task)  # a link from a task of the source changed: only the mirror
            if i in imported:
                result.unchanged += 1
            continue
        task.updated_at = now
        if old is None:
            task.created_at = now
            result.added += 1
        else:
            result.updated += 1
        txn.put(task)


# -- beads JSONL out ---------------------------------------------------------------------


def beads_lines(snap: PlanSnapshot) -> Iterator[str]:
    """One beads issue per task, as `.beads/issues.jsonl` holds them; a task that came
    from beads keeps its beads id, priority, type, labels and parent."""
    bead_ids = {i: _bead_id(t) for i, t in snap.tasks.items()}
    for i in sorted(snap.tasks):
        t = snap.tasks[i]
        # Control characters a file may hold go out as JSON escapes: same value, never raw bytes.
        yield safetext.escape_json(json.dumps(_issue(t, bead_ids), ensure_ascii=False, separators=(",", ":")))


def _bead_id(t: Task) -> str:
    src = source_of(t)
    return src[1] if src and src[0] == "beads" else f"{BEADS_PREFIX}-{t.id}"


def _beads_status(t: Task) -> str:
    src = t.metadata.get(SOURCE_KEY)
    was = src.get("status") if isinstance(src, dict) and src.get("tool") == "beads" else None
    return was if isinstance(was, str) and BEADS_STATUS.get(was) is t.status else BEADS_DEFAULT_STATUS[t.status]


def _issue(t: Task, bead_ids: dict[int, str]) -> dict[str, Any]:
    me = bead_ids[t.id]
    priority = t.priority if t.priority is not None else t.metadata.get("priority")
    issue: dict[str, Any] = {
        "id": me,
        "title": t.subject,
        "description": t.description,
        "status": _beads_status(t),
        "priority": priority if isinstance(priority, int) and 0 <= priority <= 4 else BEADS_DEFAULT_PRIORITY,
        "issue_type": t.metadata.get("type") if isinstance(t.metadata.get("type"), str) else "task",
        "created_at": t.created_at,
        "updated_at": t.updated_at,
    }
    if t.owner:
        issue["assignee"] = t.owner
    labels = t.labels or t.metadata.get("labels")
    if isinstance(labels, list) and labels:
        issue["labels"] = [str(x) for x in labels]
    deps = _dependencies(t, me, bead_ids)
    if deps:
        issue["dependencies"] = deps
    if t.notes:
        issue["comments"] = [
            {"author": n.get("by", ""), "text": n.get("text", ""), "created_at": n.get("at", "")} for n in t.notes
        ]
    return issue


def _dependencies(t: Task, me: str, bead_ids: dict[int, str]) -> list[dict[str, str]]:
    """The issue's beads dependencies: its blockers, its parent, and, for a task that came
    from beads, the links it kept there."""
    deps = [{"issue_id": me, "depends_on_id": bead_ids[b], "type": "blocks"} for b in t.blocked_by if b in bead_ids]
    parent = bead_ids.get(t.parent) if t.parent is not None else None
    if parent is not None:
        deps.append({"issue_id": me, "depends_on_id": parent, "type": "parent-child"})
    if _bead_id(t) != f"{BEADS_PREFIX}-{t.id}":  # from beads: its other links too
        deps += _kept_links(t, me, parent is None)
    return deps


def _kept_links(t: Task, me: str, no_parent: bool) -> list[dict[str, str]]:
    """The links of a task from beads kept in its metadata (a parent not among the tasks, related issues)."""
    deps = []
    if no_parent and isinstance(t.metadata.get("parent"), str):
        deps.append({"issue_id": me, "depends_on_id": t.metadata["parent"], "type": "parent-child"})
    related = t.metadata.get("related")
    for rel in related if isinstance(related, list) else []:
        if isinstance(rel, dict):
            deps.append({"issue_id": me, "depends_on_id": str(rel.get("id")), "type": str(rel.get("type"))})
    return deps
