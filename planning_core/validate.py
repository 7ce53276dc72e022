"""Checks on tool input that the models alone cannot express, each refusal an
InvalidInput whose message says how to fix the call."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from . import graph, safetext
from .errors import InvalidInput
from .models import MAX_EDGES, MAX_METADATA_BYTES, MAX_PLAN_TASKS, TaskSpec, first_problem, metadata_size
from .names import parse_task_ids

# The fields that may span lines (safetext states the rule); every other text is one line.
MULTI_LINE_FIELDS = frozenset({"description", "analysis", "approach", "approved plan"})
# Deeper metadata is no real record, and each level widens the indented task file.
MAX_METADATA_DEPTH = 20


def text(value: Any, field: str, limit: int, *, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string.")
    if len(value) > limit:
        raise InvalidInput(f"{field} is {len(value):,} characters; the limit is {limit:,}. Shorten it.")
    if required and not value.strip():
        raise InvalidInput(f"{field} must not be empty.")
    checked: str = value.strip() if required else value
    reason = safetext.problem(checked, field, multiline=field in MULTI_LINE_FIELDS)
    if reason:
        raise InvalidInput(reason + " Nothing was changed.")
    return checked


def metadata(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput("metadata must be an object (JSON dictionary).")
    _finite(value, "metadata", 0)
    if metadata_size(value) > MAX_METADATA_BYTES:
        raise InvalidInput(f"metadata is larger than {MAX_METADATA_BYTES // 1024} KB; store less in it.")
    return value


def _finite(value: Any, where: str, depth: int) -> None:
    """NaN and infinities have no JSON form: stored they would become null, which in an
    update means "remove this key". Refuse them, naming where they are."""
    if depth > MAX_METADATA_DEPTH:
        raise InvalidInput(f"{where} is nested more than {MAX_METADATA_DEPTH} levels deep; flatten it.")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(
            f"{where} is {value!r}, which JSON cannot store (it would be saved as null, which "
            "removes the key). Send a finite number, or the value as a string. Nothing was changed."
        )
    if isinstance(value, dict):
        for k, v in value.items():
            _finite(v, f"{where}.{safetext.escape(str(k))}", depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _finite(v, f"{where}[{i}]", depth + 1)


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
        specs.append(spec)
    cycle = graph.positional_cycle({i: s.blocked_by for i, s in enumerate(specs, start=1)})
    if cycle:
        path = " -> ".join(f"#{i}" for i in cycle)
        raise InvalidInput(f"The tasks' blockedBy positions form a cycle {path}. Nothing was created.")
    return specs
