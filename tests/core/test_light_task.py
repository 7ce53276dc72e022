"""The light read of a task (taskjson.light_task, the Stop hook's, without the models) knows
every field of a task document, and holds each value it takes exactly as the models do:
any document it takes, the models read to the same attributes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from planning_core.models import Task
from planning_core.taskdoc import parse_task
from planning_core.taskjson import LIGHT_FORMS, MODEL_NAMES, LightTask, light_task

TASK_ID = 3
ints = st.integers(min_value=-(2**70), max_value=2**70)
texts = st.text(max_size=12)
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "description": texts,
    "blockedBy": st.lists(st.one_of(st.integers(1, 9), st.just("2"), st.just(True), st.just(2.0)), max_size=4),
    "blocks": st.lists(ints, max_size=3),
    "owner": st.one_of(texts, st.just(7)),
    "activeForm": texts,
    "metadata": st.one_of(st.dictionaries(texts, st.integers(), max_size=2), st.just([])),
    "createdAt": texts,
    "updatedAt": texts,
    "leaseSeconds": st.one_of(ints, st.just("60")),
    "leaseExpiresAt": st.one_of(texts, st.just("2020-01-01T00:00:00Z")),
    "priority": st.one_of(st.none(), st.integers(-2, 6), st.just(True), st.just("high"), st.just(1.0)),
    "labels": st.lists(st.one_of(texts, st.just(3)), max_size=3),
    "parent": st.one_of(st.none(), st.integers(-1, 4), st.just("2")),
    "gate": st.one_of(st.none(), st.just("human")),
    "acceptance": st.lists(texts, max_size=2),
    "notes": st.lists(st.dictionaries(texts, st.one_of(texts, st.integers()), max_size=2), max_size=2),
    "verification": st.one_of(st.none(), st.just({"state": "passed"})),
    "blocked_by": st.just([1]),
    "estimate": texts,
}
documents = st.fixed_dictionaries(
    {
        "id": st.sampled_from([TASK_ID, 4, "3", True]),
        "subject": st.one_of(texts, st.just(7)),
        "status": st.sampled_from(["pending", "in_progress", "completed", "done", 1, None]),
    },
    optional=VALUES,
)


def test_the_light_read_knows_every_field_of_a_task() -> None:
    """A field added to the models is one the light read must learn (or leave to them)."""
    aliases = {f.alias or name for name, f in Task.model_fields.items()}
    assert set(LIGHT_FORMS) == aliases
    assert MODEL_NAMES | set(LIGHT_FORMS) >= set(Task.model_fields) | aliases


@settings(max_examples=300)
@given(documents)
def test_a_document_the_light_read_takes_reads_the_same_with_the_models(document: dict[str, Any]) -> None:
    light = light_task(document, TASK_ID)
    if light is None:
        return
    task = parse_task(json.dumps(document), TASK_ID)
    assert isinstance(task, Task), task
    for field in LightTask._fields:
        assert getattr(light, field) == getattr(task, field), field
        assert type(getattr(light, field)) is type(getattr(task, field)), field
    assert task.id not in task.blocked_by  # a store's view would drop a link to itself
