"""A plan's task graph as Mermaid: one node per task, an edge from each blocker to
the task it blocks, nodes coloured by status (the seeds' palette).

    flowchart TD
        T1["#1 Design auth schema"]
        T2["#2 Implement JWT middleware"]
        T1 --> T2
        classDef completed fill:#162118,stroke:#3fb950,color:#3fb950
        ...
        class T1 completed

Pure text in, text out: paste it into a ```mermaid block (GitHub, IDEs) to see it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..models import CorruptFile, PlanSnapshot, Task, TaskStatus
from ..safetext import escape
from .render import marks

MAX_LABEL = 60

# Dark fills with a bright stroke and text, as in the seed documents' diagrams.
CLASS_DEFS = {
    "completed": "fill:#162118,stroke:#3fb950,color:#3fb950",
    "in_progress": "fill:#2d1b00,stroke:#e3b341,color:#e3b341",
    "pending": "fill:#21262d,stroke:#8b949e,color:#c9d1d9",
    "unreadable": "fill:#3b1219,stroke:#f85149,color:#f85149,stroke-dasharray:4 3",
}
_STATUS_CLASS = {
    TaskStatus.COMPLETED: "completed",
    TaskStatus.IN_PROGRESS: "in_progress",
    TaskStatus.PENDING: "pending",
}
_ENTITY_LIKE = re.compile(r"#(?=\w*;)")


def label_text(text: str, limit: int = MAX_LABEL) -> str:
    """Text that is safe inside a quoted Mermaid label: one line, no quote, no tag,
    nothing Mermaid would read as an entity code."""
    text = escape(" ".join(text.split()))  # no ESC or other control reaches `graph`'s terminal
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    text = _ENTITY_LIKE.sub("#35;", text)
    return text.replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def _lines(tasks: Sequence[Task], unreadable: Sequence[CorruptFile], prefix: str, indent: str) -> list[str]:
    def node(i: int) -> str:
        return f"{prefix}T{i}"

    known = {t.id for t in tasks} | {c.task_id for c in unreadable}
    out: list[str] = []
    for t in sorted(tasks, key=lambda t: t.id):
        shown = marks(t).strip()  # priority, labels, parent: as a TaskList line shows them
        out.append(f'{indent}{node(t.id)}["#{t.id} {label_text(t.subject)}{" " + label_text(shown) if shown else ""}"]')
    for c in sorted(unreadable, key=lambda c: c.task_id):
        out.append(f'{indent}{node(c.task_id)}["#{c.task_id} unreadable: {label_text(c.file)}"]')
    for t in sorted(tasks, key=lambda t: t.id):
        out += [f"{indent}{node(b)} --> {node(t.id)}" for b in sorted(set(t.blocked_by)) if b in known and b != t.id]
    return out


def _classes(groups: dict[str, list[str]], indent: str) -> list[str]:
    out = [f"{indent}classDef {name} {style}" for name, style in CLASS_DEFS.items()]
    out += [f"{indent}class {','.join(nodes)} {name}" for name, nodes in groups.items() if nodes]
    return out


def _group(tasks: Iterable[Task], unreadable: Iterable[CorruptFile], prefix: str, groups: dict[str, list[str]]) -> None:
    for t in sorted(tasks, key=lambda t: t.id):
        groups[_STATUS_CLASS[t.status]].append(f"{prefix}T{t.id}")
    for c in sorted(unreadable, key=lambda c: c.task_id):
        groups["unreadable"].append(f"{prefix}T{c.task_id}")


def task_graph(tasks: Sequence[Task], unreadable: Sequence[CorruptFile] = ()) -> str:
    """`flowchart TD` for one plan's tasks (blocker --> blocked)."""
    indent = "    "
    lines = ["flowchart TD"]
    if not tasks and not unreadable:
        return "\n".join([*lines, f'{indent}empty["(no tasks yet)"]'])
    lines += _lines(tasks, unreadable, "", indent)
    groups: dict[str, list[str]] = {name: [] for name in CLASS_DEFS}
    _group(tasks, unreadable, "", groups)
    return "\n".join(lines + _classes(groups, indent))


def plan_graph(snapshot: PlanSnapshot) -> str:
    return task_graph(list(snapshot.tasks.values()), snapshot.corrupt)


def plans_graph(snapshots: Sequence[PlanSnapshot]) -> str:
    """One plan: its graph. Several: one flowchart, a subgraph per plan (node ids
    prefixed `P<n>_` so that task numbers of different plans never collide)."""
    if len(snapshots) == 1:
        return plan_graph(snapshots[0])
    indent = "    "
    lines = ["flowchart TD"]
    if not snapshots:
        return "\n".join([*lines, f'{indent}empty["(no active plans)"]'])
    groups: dict[str, list[str]] = {name: [] for name in CLASS_DEFS}
    for n, snap in enumerate(snapshots, start=1):
        prefix = f"P{n}_"
        tasks = list(snap.tasks.values())
        lines.append(f'{indent}subgraph P{n}["{label_text(snap.name, 80)}"]')
        body = _lines(tasks, snap.corrupt, prefix, indent * 2)
        lines += body or [f'{indent * 2}{prefix}empty["(no tasks yet)"]']
        lines.append(f"{indent}end")
        _group(tasks, snap.corrupt, prefix, groups)
    return "\n".join(lines + _classes(groups, indent))
