"""Ids beyond any bound, the verify prompt's plan, the session table's bound, malformed arguments."""

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


def test_sessions_are_bounded_least_recently_used_first(tmp_path: Any) -> None:
    from planning_core import Planner
    from planning_core.actions import Actions
    from planning_core.stores.files import FileStore
    from server.mcp.state import MAX_SESSIONS, AppState

    store = FileStore(tmp_path / "root")
    planner = Planner(store)
    state = AppState(store=store, actions=Actions(planner))
    kept = state.session("http:first")
    for i in range(MAX_SESSIONS + 50):
        state.session(f"http:{i}")
        state.session("http:first")  # in use all along
    assert len(state.sessions) == MAX_SESSIONS
    assert state.session("http:first") is kept
    assert "http:0" not in state.sessions


async def test_malformed_arguments_get_one_line_per_field(connect: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        await ok(c, "PlanCreate", {"title": "P", "analysis": "a", "approach": "b"})
        r = await c.call_tool("TaskCreate", {"subject": "x", "description": "d", "blockedBy": "garbage"})
        assert r.is_error
        assert text(r) == (
            "Invalid arguments for TaskCreate: blockedBy: Input should be a valid list. Fix them and call again."
        )
