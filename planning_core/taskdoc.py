"""A task's stored document, the one form every store keeps: the JSON `Task.to_json` writes,
named `task_<id>.json`, and the rule that reads it back (a bad document is reported, never
raised). Above the stores: the file store names files with it, PostgreSQL names rows."""

from __future__ import annotations

import json

from pydantic import ValidationError

from .models import Task


def task_filename(task_id: int) -> str:
    return f"task_{task_id}.json"


def parse_task(raw: bytes | str, task_id: int) -> Task | str:
    """A stored task document, or the reason it is not one: the one rule for every store
    that keeps tasks as JSON documents (a bad row is reported as a bad file is)."""
    try:
        task = Task.model_validate(json.loads(raw))
    except (ValueError, ValidationError, RecursionError) as e:
        return f"invalid task JSON ({(str(e).splitlines() or [type(e).__name__])[0][:120]})"
    if task.id != task_id:
        return f"its id field is {task.id}, not {task_id}"
    return task
