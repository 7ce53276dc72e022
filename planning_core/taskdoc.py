"""A task's stored document, the one form every store keeps: the JSON `Task.to_json` writes,
named `task_<id>.json` (taskjson.py: the document read as it is), and the rule that reads it
back (a bad document is reported, never raised). Above the stores: the file store names files
with it, PostgreSQL names rows."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from .models import Task
from .taskjson import BadDocument, invalid_reason, load_document
from .taskjson import task_filename as task_filename

# The fields a document may lack (each left out of the file while unset), by their key.
_OPTIONAL_KEYS = frozenset(f.alias or n for n, f in Task.model_fields.items() if f.exclude_if is not None)


def parse_task(raw: bytes | str, task_id: int) -> Task | str:
    """A stored task document, or the reason it is not one: the one rule for every store
    that keeps tasks as JSON documents (a bad row is reported as a bad file is)."""
    try:
        task = validated_task(load_document(raw))
    except BadDocument as e:
        return str(e)
    except (ValueError, ValidationError, RecursionError) as e:
        return invalid_reason(e)
    if task.id != task_id:
        return f"its id field is {task.id}, not {task_id}"
    return task


def validated_task(data: Any) -> Task:
    """The task of a document. A key of one of the fields a document may lack whose value is
    not that field's (another tool's `"priority": "high"`, written before the field existed)
    stays the unknown field it was, kept and written back as it is, and the field is unset.
    Only a document that fails validation takes this path."""
    try:
        return Task.model_validate(data)
    except ValidationError as e:
        foreign = {str(err["loc"][0]) for err in e.errors() if err["loc"] and err["loc"][0] in _OPTIONAL_KEYS}
        if not foreign or not isinstance(data, dict):
            raise
    task = Task.model_validate({k: v for k, v in data.items() if k not in foreign})
    kept = task.__pydantic_extra__ or {}
    extra = {k: v for k, v in data.items() if k in foreign or k in kept}  # in the document's order
    object.__setattr__(task, "__pydantic_extra__", extra)
    return task
