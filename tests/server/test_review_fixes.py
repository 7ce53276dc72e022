"""Protocol-level regressions found in review."""

from __future__ import annotations

from typing import Any


async def test_huge_task_id_is_a_tool_error(connect: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        await ok(c, "PlanCreate", {"title": "P", "analysis": "a", "approach": "b", "tasks": [{"subject": "s"}]})
        r = await c.call_tool("TaskGet", {"taskId": 10**5000})
        assert r.is_error and "Invalid task id" in text(r)
        assert not (await c.call_tool("TaskGet", {"taskId": 1})).is_error


async def test_verify_prompt_uses_the_sessions_current_plan(connect: Any, ok: Any) -> None:
    async with connect() as c:
        await ok(c, "PlanCreate", {"title": "First", "analysis": "a", "approach": "b"})
        await ok(c, "PlanCreate", {"title": "Second", "analysis": "a", "approach": "b"})
        prompt = await c.get_prompt("verify", {})
        body = prompt.messages[0].content.text
        assert "Cannot verify" not in body
        assert "# Second" in body
