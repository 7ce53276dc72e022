"""Every field a caller sets (models.FieldRule, stated once on Task) reaches the tools: a
parameter of TaskCreate and TaskUpdate, a field of PlanCreate's tasks where its rule says so,
carried by the tool into the task, named by TaskUpdate's answer and shown by TaskGet. A field
added to Task and left out of a tool's signature fails here."""

from __future__ import annotations

from typing import Any

from mcp.types import Tool

from planning_core.models import RULES, SETTABLE, WIRE
from tests.core.test_task_fields import CREATE, UPDATE
from tests.support.mcp import text_of


def _properties(tools: list[Tool], name: str) -> dict[str, Any]:
    tool = next(t for t in tools if t.name == name)
    return dict(tool.input_schema["properties"])


async def test_every_settable_field_is_a_parameter_of_the_tools(connect: Any) -> None:
    async with connect() as c:
        tools = (await c.list_tools()).tools
    for tool in ("TaskCreate", "TaskUpdate"):
        assert {WIRE[n] for n in SETTABLE} <= set(_properties(tools, tool)), tool
    plan_task = _properties(tools, "PlanCreate")["tasks"]["items"]["properties"]
    assert set(plan_task) == {WIRE[n] for n, rule in RULES.items() if rule.in_plan is not None}


async def test_every_settable_field_sent_reaches_the_task_and_its_answers(connect: Any, ok: Any) -> None:
    wire = {WIRE[n]: v for n, v in CREATE.items()}
    async with connect() as c:
        await ok(c, "PlanCreate", {"title": "Fields", "analysis": "a", "approach": "b", "tasks": [{"subject": "one"}]})
        created = await ok(c, "TaskCreate", wire)
        tid = created.structured_content["task"]["id"]
        got = await ok(c, "TaskGet", {"taskId": tid})
        for name, value in CREATE.items():
            assert got.structured_content["task"][WIRE[name]] == value, name
        shown = text_of(got)
        for name, (sent, kept) in UPDATE.items():
            updated = await ok(c, "TaskUpdate", {"taskId": tid, WIRE[name]: sent})
            assert text_of(updated) == f"Updated task #{tid} {WIRE[name]}", name
            got = await ok(c, "TaskGet", {"taskId": tid})
            assert got.structured_content["task"].get(WIRE[name]) == kept, name
            assert text_of(got) != shown, f"TaskGet's text does not show {name}"
            shown = text_of(got)
