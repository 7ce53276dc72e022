"""Checks on tool input that the models alone cannot express, each refusal an
InvalidInput whose message says how to fix the call."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from .checks import MAX_METADATA_DEPTH as MAX_METADATA_DEPTH
from .checks import MULTI_LINE_FIELDS as MULTI_LINE_FIELDS
from .checks import metadata as metadata
from .checks import text as text
from .errors import InvalidInput
from .models import MAX_EDGES, MAX_PLAN_TASKS, TaskSpec, first_problem
from .names import parse_task_ids
from .taskgraph import graph


def edges(values: Any, field: str) -> list[int]:
    ids = parse_task_ids(values)
    if len(ids) > MAX_EDGES:
        raise InvalidInput(f"{field} lists {len(ids)} ids; at most {MAX_EDGES} at once.")
    return ids


def task_specs(tasks: Sequence[TaskSpec | dict[str, Any]]) -> list[TaskSpec]:
    if len(tasks) > MAX_PLAN_TASKS:
        raise InvalidInput(f"tasks has {len(tasks)} items; at most {MAX_PLAN_TASKS} per PlanCreate.")
    specs: list[TaskSpec] = []
    for pos, raw in enumerate(tasks, start=1):
        try:
            spec = raw if isinstance(raw, TaskSpec) else TaskSpec.model_validate(raw)
        except ValidationError as e:
            raise InvalidInput(
                f"tasks[{pos}] is invalid ({first_problem(e)}). Nothing was created; fix it and retry."
            ) from None
        for b in spec.blocked_by:
            if b == pos:
                raise InvalidInput(f"tasks[{pos}] lists itself in blockedBy. Nothing was created.")
            if not 1 <= b <= len(tasks):
                raise InvalidInput(
                    f"tasks[{pos}].blockedBy has position {b}; positions are 1..{len(tasks)} "
                    "in this tasks list. Nothing was created."
                )
        _position(spec.parent, pos, "parent", len(tasks))
        specs.append(spec)
    positions: dict[str, dict[int, Iterable[int]]] = {
        "blockedBy": {i: s.blocked_by for i, s in enumerate(specs, start=1)},
        "parent": {i: [s.parent] if s.parent else [] for i, s in enumerate(specs, start=1)},
    }
    for field, links in positions.items():
        cycle = graph.positional_cycle(links)
        if cycle:
            path = " -> ".join(f"#{i}" for i in cycle)
            raise InvalidInput(f"The tasks' {field} positions form a cycle {path}. Nothing was created.")
    return specs


def _position(value: int | None, pos: int, field: str, count: int) -> None:
    if value is None:
        return
    if value == pos:
        raise InvalidInput(f"tasks[{pos}] names itself as its {field}. Nothing was created.")
    if not 1 <= value <= count:
        raise InvalidInput(
            f"tasks[{pos}].{field} is position {value}; positions are 1..{count} in this tasks list. "
            "Nothing was created."
        )
