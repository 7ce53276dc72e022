"""A task file's text: what every store writes for a task (Task.to_json).

People read and edit these files by hand, and other tools parse them: the text is
json.dumps(..., ensure_ascii=False, indent=2) of the task's fields in the contract's
order (what the first versions wrote), whatever the task holds."""

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from planning_core.models import Task

# JSON values a client can put into metadata (no floats: their shortest spelling differs
# between encoders, e.g. 1e-07 and 1e-7, which both read back as the same number).
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)

tasks = st.builds(
    lambda subject, description, owner, metadata, blocked_by, extra: Task.model_validate(
        {
            "id": 7,
            "subject": subject,
            "description": description,
            "status": "in_progress",
            "blockedBy": blocked_by,
            "blocks": [],
            "owner": owner,
            "activeForm": "",
            "metadata": metadata,
            "createdAt": "2026-12-01T10:00:00Z",
            "updatedAt": "2026-12-01T10:00:00Z",
            **extra,
        }
    ),
    st.text(min_size=1, max_size=30),
    st.text(max_size=60),
    st.text(max_size=10),
    st.dictionaries(st.text(max_size=8), json_values, max_size=5),
    st.lists(st.integers(1, 10**9), max_size=3),
    st.dictionaries(st.sampled_from(["reviewedBy", "x-tool", "notesFromAnotherTool"]), json_values, max_size=2),
)


def dumped(task: Task) -> dict[str, Any]:
    return task.model_dump(by_alias=True, mode="json")


@settings(max_examples=300, deadline=None)
@given(tasks)
def test_a_task_file_is_indented_json_of_its_fields_in_order(task: Task) -> None:
    text = task.to_json()
    assert text == json.dumps(dumped(task), ensure_ascii=False, indent=2) + "\n"
    assert Task.model_validate_json(text) == task


def test_floats_in_metadata_read_back_as_the_same_numbers() -> None:
    numbers = [0.1 + 0.2, 1e-07, 5e-324, 1e16, 1e20, -0.0, 123456789.123456789, 2.5]
    task = Task.model_validate(
        {"id": 1, "subject": "s", "status": "pending", "metadata": {"n": numbers}, "createdAt": "", "updatedAt": ""}
    )
    assert json.loads(task.to_json())["metadata"]["n"] == numbers


def test_text_that_is_not_ascii_is_written_as_it_is_and_control_characters_escaped() -> None:
    task = Task.model_validate(
        {"id": 1, "subject": 'Ünïcode ✓ "quoted" \\', "description": "a\x00b\u2028c\td", "status": "pending"}
    )
    text = task.to_json()
    assert 'Ünïcode ✓ \\"quoted\\" \\\\' in text
    assert "\\u0000" in text and "\\t" in text
    assert json.loads(text)["description"] == "a\x00b\u2028c\td"
