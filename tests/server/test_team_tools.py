"""A team's calls through the tools, on every store: TaskUpdate taskId "next" takes
`label` and `parent` (the task a claim may take), and a label is refused anywhere else;
`note` appends a note by the session's claim; `waitSeconds` belongs to a claim of "next"
and waits only while work is left (the waits themselves: tests/e2e/test_team_claims.py)."""

from __future__ import annotations

from typing import Any

import anyio

from tests.support.mcp import text_of
from tests.support.waits import bound

TASKS = [{"subject": "epic"}, {"subject": "form", "labels": ["ui"], "parent": 1}, {"subject": "api", "priority": 0}]


async def test_next_takes_a_label_and_a_parent(connect: Any, ok: Any) -> None:
    async with connect() as c:
        await ok(c, "PlanCreate", {"title": "Team", "analysis": "a", "approach": "b", "tasks": TASKS})
        claim = {"taskId": "next", "status": "in_progress", "owner": "ann"}
        got = await ok(c, "TaskUpdate", {**claim, "label": "ui"})
        assert got.structured_content["taskId"] == 2 and "Claimed: #2 form" in text_of(got)
        refused = await c.call_tool("TaskUpdate", {**claim, "parent": 1})
        assert refused.is_error and "the one unfinished task part of #1 cannot start now" in text_of(refused)
        assert "2 other tasks are ready (no label 2)" in text_of(refused), text_of(refused)
        refused = await c.call_tool("TaskUpdate", {"taskId": 3, "status": "in_progress", "owner": "b", "label": "x"})
        assert refused.is_error and "send labels" in text_of(refused)
        got = await ok(c, "TaskUpdate", claim)
        assert got.structured_content["taskId"] == 3  # no pick: the best of all


async def test_a_note_through_the_tools(connect: Any, ok: Any) -> None:
    async with connect() as c:
        await ok(c, "PlanCreate", {"title": "Team", "analysis": "a", "approach": "b", "tasks": TASKS})
        await ok(c, "TaskUpdate", {"taskId": 2, "status": "in_progress", "owner": "ann"})
        updated = await ok(c, "TaskUpdate", {"taskId": 2, "note": "form drafted"})
        assert text_of(updated) == "Updated task #2 notes"
        got = await ok(c, "TaskGet", {"taskId": 2})
        [note] = got.structured_content["task"]["notes"]
        assert (note["by"], note["text"]) == ("ann", "form drafted")  # this session's claim
        assert f"- {note['at']} ann: form drafted" in text_of(got).splitlines()


async def test_waitseconds_is_a_claims_and_needs_no_wait_when_no_work_is_left(connect: Any, ok: Any) -> None:
    async with connect() as c:
        await ok(c, "PlanCreate", {"title": "Team", "analysis": "a", "approach": "b", "tasks": TASKS[:1]})
        claim = {"taskId": "next", "status": "in_progress", "owner": "ann"}
        for bad in (0, 51, True):
            refused = await c.call_tool("TaskUpdate", {**claim, "waitSeconds": bad})
            assert refused.is_error and "waitSeconds" in text_of(refused), text_of(refused)
        refused = await c.call_tool("TaskUpdate", {"taskId": 1, "status": "completed", "waitSeconds": 5})
        assert refused.is_error and 'waitSeconds belongs to a claim of taskId "next"' in text_of(refused)
        got = await ok(c, "TaskUpdate", {**claim, "waitSeconds": 50})  # ready now: no wait
        assert got.structured_content["taskId"] == 1
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "completed"})
        with anyio.fail_after(bound(10)):  # every task done: answered at once, not after 50 s
            refused = await c.call_tool("TaskUpdate", {**claim, "waitSeconds": 50})
        assert refused.is_error and "all 1 tasks are completed" in text_of(refused)
