"""Readers of the task files other tools write, into ImportedPlan (importing.py maps them
onto a plan). Each format's fields are documented in docs/import.md.

- beads: `.beads/issues.jsonl`, one issue per line;
- Task Master: `.taskmaster/tasks/tasks.json`, tagged (`{"master": {"tasks": [...]}}`) or
  the older `{"tasks": [...]}`; subtasks become tasks of their own;
- Claude Code: a task list folder (`~/.claude/tasks/<list>/`, one `<id>.json` per task);
- spec-kit and Kiro: `tasks.md` checkbox lines, `## Phase N` headings as phases run in
  order (through a checkpoint task each, docs/import.md).

Every reader refuses, with one line naming the file, what it cannot read: nothing is
guessed into a plan."""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..models import MAX_NOTE, TaskStatus
from .importing import BEADS_STATUS, MAX_IMPORTED_TASKS, ImportedPlan, ImportedTask

MAX_IMPORT_BYTES = 20 * 1024 * 1024  # a source bigger than this is refused, never read
FORMATS = ("beads", "taskmaster", "claude", "tasksmd")

# Where each tool keeps its file inside a project folder, so that `import .` finds it.
PROJECT_FILES = {"beads": ".beads/issues.jsonl", "taskmaster": ".taskmaster/tasks/tasks.json"}

P, IP, C = TaskStatus.PENDING, TaskStatus.IN_PROGRESS, TaskStatus.COMPLETED
TASKMASTER_STATUS = {"pending": P, "in-progress": IP, "review": IP, "done": C, "deferred": P, "cancelled": C}
CLAUDE_STATUS = {"pending": P, "in_progress": IP, "completed": C}
TOMBSTONE = "tombstone"  # beads' status of a deleted issue
BEADS_BLOCKING = ("blocks", "conditional-blocks", "waits-for")  # the dependency types that gate work


def refuse(path: Path, why: str) -> InvalidInput:
    return InvalidInput(f"cannot import {path}: {why}; nothing was written.")


def read_text(path: Path) -> str:
    """The file's text, refused when it is a symlink, not a regular file, too big or not UTF-8."""
    if path.is_symlink():
        raise refuse(path, "it is a symbolic link (import the file it points to)")
    if not path.is_file():
        raise refuse(path, "no such file")
    size = path.stat().st_size
    if size > MAX_IMPORT_BYTES:
        raise refuse(path, f"it is {size:,} bytes; at most {MAX_IMPORT_BYTES:,}")
    with path.open("rb") as f:
        data = f.read(MAX_IMPORT_BYTES + 1)  # the file may grow after stat
    if len(data) > MAX_IMPORT_BYTES:
        raise refuse(path, f"it is over {MAX_IMPORT_BYTES:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise refuse(path, f"it is not UTF-8 text (byte {e.start})") from None


def check_count(path: Path, tasks: list[ImportedTask]) -> None:
    """Refused as soon as the source is found to hold more tasks than an import takes."""
    if len(tasks) > MAX_IMPORTED_TASKS:
        raise refuse(path, f"it holds over {MAX_IMPORTED_TASKS:,} tasks, the most an import takes")


def parse_json(path: Path, text: str, where: str = "") -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        # `where` names the line already (a JSONL file): then the column is what is new.
        at = f"column {e.colno}" if where else f"line {e.lineno}, column {e.colno}"
        raise refuse(path, f"invalid JSON{where} ({at})") from None
    except RecursionError:
        raise refuse(path, f"invalid JSON{where} (too deeply nested)") from None
    except ValueError:  # a number of more digits than Python reads (sys.get_int_max_str_digits)
        raise refuse(path, f"a number{where} has over {sys.get_int_max_str_digits():,} digits") from None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _labels(value: Any) -> list[str]:
    return [str(v) for v in _list(value)]


def _object(path: Path, value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise refuse(path, f"{where} is not a JSON object")
    return value


# -- beads ------------------------------------------------------------------------


def read_beads(path: Path) -> list[ImportedPlan]:
    tasks = []
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        if line.strip():
            tasks.append(_beads_issue(path, _object(path, parse_json(path, line, f" on line {n}"), f"line {n}"), n))
            check_count(path, tasks)
    # A deleted issue stays in the file as a tombstone: left out, and links to it with it.
    gone = {t.source_id for t in tasks if t.source_status == TOMBSTONE}
    tasks = [t for t in tasks if t.source_id not in gone]
    for t in tasks:
        t.blocked_by = [b for b in t.blocked_by if b not in gone]
    return [ImportedPlan("beads", _project_title(path, "beads"), tasks)]


def _beads_issue(path: Path, issue: dict[str, Any], n: int) -> ImportedTask:
    sid = _text(issue.get("id"))
    if not sid:
        raise refuse(path, f"the issue on line {n} has no id")
    blocked_by: list[str] = []
    meta: dict[str, Any] = {}
    for dep in _list(issue.get("dependencies")):
        if not isinstance(dep, dict):
            continue
        kind, on = _text(dep.get("type") or "blocks"), _text(dep.get("depends_on_id"))
        if kind in BEADS_BLOCKING:
            blocked_by.append(on)
        elif kind == "parent-child":
            meta["parent"] = on
        elif on:
            meta.setdefault("related", []).append({"id": on, "type": kind})
    status = _text(issue.get("status") or "open")
    for key, wire in (("priority", "priority"), ("type", "issue_type")):
        if issue.get(wire) is not None:
            meta[key] = issue[wire]
    if _labels(issue.get("labels")):
        meta["labels"] = _labels(issue.get("labels"))
    return ImportedTask(
        source_id=sid,
        subject=_text(issue.get("title")),
        description=_text(issue.get("description")),
        status=BEADS_STATUS.get(status, P),
        source_status=status,
        owner=_text(issue.get("assignee") or issue.get("owner")),
        blocked_by=blocked_by,
        metadata=meta,
        notes=_beads_comments(issue.get("comments")),
    )


def _beads_comments(value: Any) -> list[dict[str, str]]:
    """A beads issue's comments as notes {by, at, text}, each text within MAX_NOTE."""
    notes = []
    for c in _list(value):
        if isinstance(c, dict) and _text(c.get("text")).strip():
            text = _text(c.get("text"))[:MAX_NOTE]
            notes.append({"by": _text(c.get("author")), "at": _text(c.get("created_at")), "text": text})
    return notes


# -- Task Master --------------------------------------------------------------------


def read_taskmaster(path: Path, tag: str | None = None) -> list[ImportedPlan]:
    data = _object(path, parse_json(path, read_text(path)), "the file")
    tags = {"master": data} if isinstance(data.get("tasks"), list) else data  # the format before tags
    if tag is not None:
        if tag not in tags:
            raise refuse(path, f"it has no tag {tag!r} (tags: {', '.join(sorted(tags)) or 'none'})")
        tags = {tag: tags[tag]}
    title = _project_title(path, "Task Master")
    plans = []
    for name, body in tags.items():
        tasks_list = _object(path, body, f"tag {name!r}").get("tasks")
        if not isinstance(tasks_list, list):
            raise refuse(path, f"tag {name!r} has no list of tasks")
        tasks: list[ImportedTask] = []
        for i, raw in enumerate(tasks_list):
            tasks.extend(_taskmaster_task(path, _object(path, raw, f"task {i + 1} of tag {name!r}")))
            check_count(path, tasks)
        _resolve_subtask_links(tasks)
        plans.append(ImportedPlan("taskmaster", title if name == "master" else f"{title} ({name})", tasks, tag=name))
    return plans


def _resolve_subtask_links(tasks: list[ImportedTask]) -> None:
    """A subtask's bare number names a sibling when there is one, else a top-level task."""
    ids = {t.source_id for t in tasks}
    for t in tasks:
        if "parent" in t.metadata:
            t.blocked_by = [
                d if d in ids or d.partition(".")[2] not in ids else d.partition(".")[2] for d in t.blocked_by
            ]


def _taskmaster_fields(raw: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    description = _text(raw.get("description"))
    details = _text(raw.get("details"))
    if details:
        description = f"{description}\n\n{details}" if description else details
    meta = {k: raw[k] for k in ("priority", "testStrategy") if raw.get(k)}
    return description, meta


def _taskmaster_task(path: Path, raw: dict[str, Any]) -> list[ImportedTask]:
    """The task, then its subtasks: each subtask is blocked by the subtasks it names
    (a bare number is a sibling, "3.1" any task's subtask), and the parent by every subtask."""
    pid = _text(raw.get("id"))
    if not pid:
        raise refuse(path, "a task has no id")
    description, meta = _taskmaster_fields(raw)
    status = _text(raw.get("status") or "pending")
    parent = ImportedTask(
        source_id=pid,
        subject=_text(raw.get("title")),
        description=description,
        status=TASKMASTER_STATUS.get(status, P),
        source_status=status,
        blocked_by=[_text(d) for d in _list(raw.get("dependencies"))],
        metadata=meta,
    )
    subtasks = []
    for sub in _list(raw.get("subtasks")):
        sub = _object(path, sub, f"a subtask of task {pid}")
        sid = f"{pid}.{_text(sub.get('id'))}"
        deps = [_text(d) if "." in _text(d) else f"{pid}.{_text(d)}" for d in _list(sub.get("dependencies"))]
        sub_description, sub_meta = _taskmaster_fields(sub)
        sub_status = _text(sub.get("status") or "pending")
        subtasks.append(
            ImportedTask(
                source_id=sid,
                subject=_text(sub.get("title")),
                description=sub_description,
                status=TASKMASTER_STATUS.get(sub_status, P),
                source_status=sub_status,
                blocked_by=[d for d in deps if d != pid],  # "depends on its parent" is implied
                metadata={**sub_meta, "parent": pid},
            )
        )
        parent.blocked_by.append(sid)
    return [parent, *subtasks]


# -- Claude Code --------------------------------------------------------------------


def read_claude(path: Path) -> list[ImportedPlan]:
    """A task list folder, or one of its task files (then its folder is read)."""
    folder = path if path.is_dir() else path.parent
    if folder.is_symlink():
        raise refuse(folder, "it is a symbolic link (import the folder it points to)")
    files = sorted(folder.glob("*.json"), key=lambda p: (len(p.stem), p.stem))
    if not files:
        raise refuse(folder, "it holds no task files (*.json)")
    if len(files) > MAX_IMPORTED_TASKS:
        raise refuse(folder, f"it holds {len(files):,} task files; at most {MAX_IMPORTED_TASKS:,} are imported")
    total = 0
    tasks = []
    for f in files:
        text = read_text(f)
        total += len(text)
        if total > MAX_IMPORT_BYTES:
            raise refuse(folder, f"its task files are over {MAX_IMPORT_BYTES:,} bytes together")
        raw = _object(f, parse_json(f, text), "the file")
        status = _text(raw.get("status") or "pending")
        meta = raw.get("metadata")
        tasks.append(
            ImportedTask(
                source_id=_text(raw.get("id")) or f.stem,
                subject=_text(raw.get("subject")),
                description=_text(raw.get("description")),
                status=CLAUDE_STATUS.get(status, P),
                source_status=status,
                owner=_text(raw.get("owner")),
                active_form=_text(raw.get("activeForm")),
                blocked_by=[_text(b) for b in _list(raw.get("blockedBy"))],
                metadata=dict(meta) if isinstance(meta, dict) else {},
            )
        )
    return [ImportedPlan("claude", f"Claude Code task list {folder.name}", tasks, tag=folder.name)]


# -- spec-kit and Kiro tasks.md ---------------------------------------------------------

CHECKBOX = re.compile(r"^(?P<indent>\s*)[-*]\s+\[(?P<mark>[ xX])\]\s+(?P<rest>.+?)\s*$")
TASK_ID = re.compile(r"^(?P<id>T\d+|\d+(?:\.\d+)*)\.?\s+")
MARKER = re.compile(r"^\[(?P<tag>[^\]]+)\]\s*")
PHASE = re.compile(r"^#{2,3}\s+(?P<title>.+?)\s*$")
CHECKPOINT = re.compile(r"^\s*\*\*Checkpoint\*\*:?\s*(?P<text>.+?)\s*$")  # spec-kit's line ending a phase
CHECKPOINT_ID = "checkpoint-"  # a checkpoint's source id: checkpoint-1 follows the first phase


@dataclass
class _Phase:
    """The tasks under one heading of a tasks.md (its top-level ones), where they end in
    the file's order (its checkpoint goes there) and its `**Checkpoint**:` line."""

    tasks: list[ImportedTask] = field(default_factory=list)
    end: int = 0
    note: str = ""


def read_tasksmd(path: Path) -> list[ImportedPlan]:
    """Checkbox lines are tasks; the tasks under a heading are a phase, and phases run in
    order: a checkpoint task after each phase is blocked by its tasks, and the next phase's
    tasks by the checkpoint (_with_checkpoints). `[P]` (may run in parallel) and the other
    bracketed markers (`[US1]`) go into metadata. An indented checkbox is a sub-task of the
    line above it: the parent is blocked by it (Kiro)."""
    tasks: list[ImportedTask] = []
    phases = [_Phase()]
    phase = ""
    parents: list[tuple[int, ImportedTask]] = []
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        heading = PHASE.match(line)
        if heading:
            phase = heading.group("title")
            if phases[-1].tasks:
                phases.append(_Phase())
            parents = []
            continue
        note = CHECKPOINT.match(line)
        if note:
            phases[-1].note = note.group("text")
        box = CHECKBOX.match(line)
        if not box:
            continue
        task = _tasksmd_task(box.group("rest"), box.group("mark") != " ", n, phase)
        indent = len(box.group("indent").expandtabs(4))
        while parents and parents[-1][0] >= indent:
            parents.pop()
        if parents:
            parents[-1][1].blocked_by.append(task.source_id)
            task.metadata["parent"] = parents[-1][1].source_id
        else:
            phases[-1].tasks.append(task)
        parents.append((indent, task))
        tasks.append(task)
        phases[-1].end = len(tasks)
        check_count(path, tasks)
    return [ImportedPlan("tasksmd", _markdown_title(path), _with_checkpoints(tasks, phases))]


def _with_checkpoints(tasks: list[ImportedTask], phases: list[_Phase]) -> list[ImportedTask]:
    """The tasks with a checkpoint after each phase that another follows. Every task of a
    phase waits for every task of the one before, through the checkpoint: links in
    proportion to the tasks (linking the two phases' tasks directly makes their product)."""
    after: dict[int, ImportedTask] = {}
    for k, (before, following) in enumerate(itertools.pairwise([p for p in phases if p.tasks]), start=1):
        gate = _checkpoint(k, before)
        for task in following.tasks:
            task.blocked_by.append(gate.source_id)
        after[before.end] = gate
    out: list[ImportedTask] = []
    for position, task in enumerate(tasks, start=1):
        out.append(task)
        if position in after:
            out.append(after[position])
    return out


def _checkpoint(k: int, phase: _Phase) -> ImportedTask:
    title = phase.tasks[0].metadata.get("phase") or "the tasks before the first heading"
    done = all(t.status is C for t in phase.tasks)
    said = f"{phase.note}\n\n" if phase.note else ""
    return ImportedTask(
        source_id=f"{CHECKPOINT_ID}{k}",
        subject=f"Checkpoint: {title} done",
        description=f"{said}Every task of {title} is done: check its work before the next phase starts.",
        status=C if done else P,
        source_status="x" if done else " ",
        blocked_by=[t.source_id for t in phase.tasks],
        metadata={"phase": title, "checkpoint": True},
    )


def _tasksmd_task(rest: str, done: bool, line: int, phase: str) -> ImportedTask:
    found = TASK_ID.match(rest)
    sid = found.group("id") if found else f"line-{line}"
    rest = rest[found.end() :] if found else rest
    markers = []
    while m := MARKER.match(rest):
        markers.append(m.group("tag"))
        rest = rest[m.end() :]
    meta: dict[str, Any] = {}
    if "P" in markers:
        meta["parallel"] = True
    if [m for m in markers if m != "P"]:
        meta["labels"] = [m for m in markers if m != "P"]
    if phase:
        meta["phase"] = phase
    return ImportedTask(
        source_id=sid,
        subject=rest,
        status=C if done else P,
        source_status="x" if done else " ",
        metadata=meta,
    )


def _markdown_title(path: Path) -> str:
    try:
        first = next((ln for ln in path.read_text("utf-8").splitlines() if ln.startswith("# ")), "")
    except OSError:
        first = ""
    return first[2:].strip() or _project_title(path, "tasks.md")


def _project_title(path: Path, tool: str) -> str:
    """`beads issues of myproject`: named by the folder that holds the tool's folder."""
    project = path.resolve().parent
    while project.name.startswith(".") or project.name in ("tasks",):
        project = project.parent
    return f"{tool} tasks of {project.name or 'this project'}"


# -- recognising a file -----------------------------------------------------------------

READERS: dict[str, Callable[[Path], list[ImportedPlan]]] = {
    "beads": read_beads,
    "claude": read_claude,
    "tasksmd": read_tasksmd,
}


def recognise(path: Path) -> tuple[str, Path]:
    """The format of `path` (and the file to read): a project folder holding a tool's file,
    a Claude Code task list folder, a `.jsonl` (beads), a `.md` (tasks.md), or a `.json`
    whose content says which (Task Master's `tasks`, Claude Code's `subject`)."""
    if not path.exists() and not path.is_symlink():
        raise refuse(path, "no such file or folder")
    if path.is_dir() and not path.is_symlink():
        for fmt, rel in PROJECT_FILES.items():
            if (path / rel).is_file():
                return fmt, path / rel
        return "claude", path
    if path.suffix == ".jsonl":
        return "beads", path
    if path.suffix == ".md":
        return "tasksmd", path
    if path.suffix == ".json":
        data = parse_json(path, read_text(path))
        if isinstance(data, dict) and "subject" in data:
            return "claude", path
        return "taskmaster", path
    raise refuse(path, f"its format is not recognised; pass --format ({', '.join(FORMATS)})")


def load(path: Path, fmt: str | None = None, tag: str | None = None) -> list[ImportedPlan]:
    """The plans `path` holds (one, or one per Task Master tag), read as `fmt` (recognised
    from the file when None)."""
    found, target = recognise(path) if fmt is None else (fmt, path)
    if found == "taskmaster":
        if target.is_dir():
            target = target / PROJECT_FILES["taskmaster"]
        return read_taskmaster(target, tag)
    if found == "beads" and target.is_dir():
        target = target / PROJECT_FILES["beads"]
    if found not in READERS:
        raise InvalidInput(f"unknown format {found!r}; one of {', '.join(FORMATS)}.")
    return READERS[found](target)
