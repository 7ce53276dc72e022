"""Claude Code (clientInfo.name "claude-code") shows its model only a result's structured
content when there is one and keeps the connect-time instructions (server/mcp/hosts.py). It
gets the contract's texts without structured content, tools promising none, instructions
without an Active Plans block, and no plan reminder from the server (its PostToolUse hook
says it). Every other client keeps exactly today's answers."""

from __future__ import annotations

from typing import Any

from mcp.types import Implementation

from planning_core import PLAN_REMINDER, TODO_REMINDER
from server.mcp.app import USAGE
from tests.support.seed import PLAN_NAME

CLAUDE_CODE = Implementation(name="claude-code", title="Claude Code", version="2.1.197")
TODO = {"items": [{"content": "write", "status": "in_progress", "activeForm": "writing"}]}


async def test_claude_code_gets_the_texts_and_no_structured_content(connect: Any, seed: Any, text: Any) -> None:
    async with connect() as sdk_client:
        await seed(sdk_client)
        expected = await sdk_client.call_tool("TaskUpdate", {"taskId": 1, "status": "completed"})
    async with connect(client_info=CLAUDE_CODE) as c:
        listed = await c.list_tools()
        assert all(t.output_schema is None for t in listed.tools)
        done = await c.call_tool("TaskUpdate", {"taskId": 2, "status": "completed"})
        assert done.structured_content is None and not done.is_error
        assert text(done) == "Updated task #2 status\nNow unblocked: #3 Add login endpoint"
        board = await c.call_tool("TaskList", {"plan": PLAN_NAME})
        assert board.structured_content is None and text(board).startswith(f"{PLAN_NAME} [2/4 done]\n#1 [completed]")
        refused = await c.call_tool("TaskGet", {"taskId": 99, "plan": PLAN_NAME})
        assert refused.is_error and "#99" in text(refused)
    # The SDK client saw the text and the structured content, as before.
    assert expected.structured_content is not None and expected.structured_content["unblocked"] == [2]
    assert text(expected) == "Updated task #1 status\nNow unblocked: #2 Implement JWT middleware"


async def test_claude_code_instructions_carry_no_active_plans_block(connect: Any, seed: Any) -> None:
    async with connect() as c:
        await seed(c)
    async with connect() as other:
        assert (other.instructions or "").endswith(f"# Active Plans\n- {PLAN_NAME} [0/4 done]")
    async with connect(client_info=CLAUDE_CODE) as c:
        assert c.instructions == USAGE


async def test_claude_code_gets_the_todo_reminder_but_not_the_plan_reminder(connect: Any, seed: Any, text: Any) -> None:
    async with connect() as c:
        await seed(c)
    async with connect(client_info=CLAUDE_CODE) as c:
        await c.call_tool("TaskUpdate", {"taskId": 1, "status": "in_progress", "plan": PLAN_NAME})
        await c.call_tool("todo", TODO)  # round 0 of the todo clock, round 1 of the plan's
        said = [text(await c.call_tool("TaskList", {"plan": PLAN_NAME})) for _ in range(9)]
    assert all(PLAN_REMINDER not in t for t in said)  # the hook's, on its own count of every tool
    assert [n for n, t in enumerate(said, 1) if TODO_REMINDER in t] == [3, 6, 9]
    assert [n for n, t in enumerate(said, 1) if t.count(TODO_REMINDER) == 1] == [3, 6, 9]
