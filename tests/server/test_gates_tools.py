"""Gates through the tools: a task created with `gate: "human"` (TaskCreate or inside
PlanCreate) cannot be completed by the agent, whose refusal names the person's command;
the claim of the next task says the work waits for a person."""

from __future__ import annotations

from typing import Any

import pytest

from tests.server.test_plan_review import Person
from tests.support.mcp import text_of


async def test_an_agent_completing_a_gated_task_is_refused_naming_who_can(connect: Any, ok: Any) -> None:
    async with connect() as c:
        tasks = [{"subject": "Approve it", "gate": "human"}]
        made = await ok(c, "PlanCreate", {"title": "Schema", "analysis": "a", "approach": "b", "tasks": tasks})
        plan = made.structured_content["plan"]["name"]
        gated = await ok(c, "TaskCreate", {"subject": "Sign off", "description": "d", "gate": "human"})
        for task_id in (1, gated.structured_content["task"]["id"]):
            refused = await c.call_tool("TaskUpdate", {"taskId": task_id, "status": "completed"})
            assert refused.is_error
            assert f"a person completes it: planning-mcp approve {plan} {task_id}" in text_of(refused)
        nothing = await c.call_tool("TaskUpdate", {"taskId": "next", "status": "in_progress", "owner": "me"})
        assert nothing.is_error
        assert f"waiting for a person: #1 Approve it (planning-mcp approve {plan} 1)" in text_of(nothing)
        bad = await c.call_tool("TaskUpdate", {"taskId": 1, "gate": "soon"})
        assert bad.is_error and 'gate must be "human"' in text_of(bad)


@pytest.mark.parametrize("mode", ["legacy"], indirect=True)  # the question rides a request inside the call
@pytest.mark.parametrize("approves", [True, False])
async def test_where_the_client_can_ask_the_person_approves_the_agents_completion(
    connect: Any, ok: Any, approves: bool
) -> None:
    person = Person("accept", {"approve": approves})
    async with connect(elicitation_callback=person) as c:
        tasks = [{"subject": "Approve the schema", "gate": "human"}, {"subject": "Migrate", "blockedBy": [1]}]
        await ok(c, "PlanCreate", {"title": "Schema", "analysis": "a", "approach": "b", "tasks": tasks})
        done = await c.call_tool("TaskUpdate", {"taskId": 1, "status": "completed"})
        got = await ok(c, "TaskGet", {"taskId": 1})
        await ok(c, "TaskUpdate", {"taskId": 2, "subject": "Migrate the data"})  # a plain update: nobody is asked
    (asked,) = person.asked
    assert "complete task #1 Approve the schema, which waits for your approval" in asked.message
    if approves:
        assert not done.is_error
        assert text_of(done) == "Updated task #1 status\nNow unblocked: #2 Migrate\nApproved by the person when asked."
        assert got.structured_content["task"]["status"] == "completed"
    else:
        assert done.is_error and "a person completes it" in text_of(done)
        assert text_of(done).endswith("The person was asked and did not approve it: leave it to them.")
        assert got.structured_content["task"]["status"] == "pending"
