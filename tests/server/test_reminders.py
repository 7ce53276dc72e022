"""Reminders, counted in rounds through a real in-memory client.

A round is one tool call answered for the session, refused calls included; the call
that changes the plan (or the todo list) is round 0; resource reads and prompts are
not rounds. A reminder is the last line of the tool's text."""

from __future__ import annotations

from typing import Any

from tests.support.seed import PLAN_NAME

PLAN_REMINDER = "<reminder>You have an active session plan. Check TaskList and update task status.</reminder>"
TODO_REMINDER = "<reminder>Your todo list has unfinished items. Update it with the todo tool.</reminder>"


def reminders(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("<reminder>")]


async def quiet_rounds(
    c: Any, text: Any, n: int, tool: str = "TaskList", args: dict[str, Any] | None = None
) -> list[str]:
    """Make n quiet calls; return each call's full text."""
    out = []
    for _ in range(n):
        result = await c.call_tool(tool, args or {})
        out.append(text(result))
    return out


def assert_plan_reminder_only_on(texts: list[str], due: set[int]) -> None:
    """texts[i] is round i+1."""
    for n, t in enumerate(texts, start=1):
        if n in due:
            assert t.splitlines()[-1] == PLAN_REMINDER, f"round {n}: {t!r}"
            assert reminders(t) == [PLAN_REMINDER], f"round {n}: {t!r}"
        else:
            assert PLAN_REMINDER not in t, f"round {n} has a plan reminder"


async def test_plan_reminder_every_fifth_quiet_round(connect: Any, seed: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        await seed(c)
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "in_progress"})  # round 0
        texts = await quiet_rounds(c, text, 10)
        assert_plan_reminder_only_on(texts, {5, 10})
        # The board is still there above the reminder.
        assert texts[4].splitlines()[0] == f"{PLAN_NAME} [0/4 done]"

        # A plan change restarts the count.
        await ok(c, "TaskUpdate", {"taskId": 1, "description": "more detail"})
        assert_plan_reminder_only_on(await quiet_rounds(c, text, 5), {5})


async def test_refused_calls_are_rounds(connect: Any, seed: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        await seed(c)
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "in_progress"})  # round 0
        r1 = await c.call_tool("TaskGet", {"taskId": 99})  # unknown id
        r2 = await c.call_tool("TaskUpdate", {"taskId": 3, "status": "in_progress"})  # refused: no plan change
        r3 = await c.call_tool("TaskList", {"limit": "many"})  # argument validation error
        r4 = await c.call_tool("nope", {})  # unknown tool
        for r in (r1, r2, r3, r4):
            assert r.is_error and PLAN_REMINDER not in text(r)
        r5 = await c.call_tool("TaskGet", {"taskId": 98})
        assert r5.is_error
        assert text(r5).splitlines()[-1] == PLAN_REMINDER
        assert "#98" in text(r5)


async def test_no_plan_reminder_without_a_task_in_progress(connect: Any, seed: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        await seed(c)
        assert_plan_reminder_only_on(await quiet_rounds(c, text, 10), set())
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "in_progress"})
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "completed"})  # nothing in progress again
        assert_plan_reminder_only_on(await quiet_rounds(c, text, 10, "PlanList"), set())


async def test_plan_reminder_follows_the_current_plan(connect: Any, seed: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        await seed(c)
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "in_progress"})
        # A new plan with nothing in progress becomes current: no reminder about the other one.
        await ok(
            c,
            "PlanCreate",
            {
                "title": "Other",
                "analysis": "a",
                "approach": "b",
                "date": "2026-05-29",
                "tasks": [{"subject": "t", "description": ""}],
            },
        )
        assert_plan_reminder_only_on(await quiet_rounds(c, text, 5, "PlanList"), set())
        # Naming the first plan makes it current again (that TaskList is a quiet round 1).
        texts = [text(await ok(c, "TaskList", {"plan": PLAN_NAME}))]
        texts += await quiet_rounds(c, text, 4, "PlanList")
        assert_plan_reminder_only_on(texts, {5})


async def test_resource_reads_and_prompts_are_not_rounds(connect: Any, seed: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        await seed(c)
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "in_progress"})
        await ok(c, "todo", {"items": [{"content": "x", "status": "pending"}]})  # plan round 1, todo round 0
        texts = []
        for _ in range(4):  # plan rounds 2..5, todo rounds 1..4
            for uri in ("plans://active", f"plans://{PLAN_NAME}", f"plans://{PLAN_NAME}/tasks/1"):
                await c.read_resource(uri)
            await c.list_resources()
            await c.get_prompt("resume", {})
            await c.get_prompt("verify", {})
            await c.get_prompt("plan-mode", {"task": "t"})
            texts.append(text(await c.call_tool("PlanList", {})))
        assert reminders(texts[0]) == []
        assert reminders(texts[1]) == []
        assert reminders(texts[2]) == [TODO_REMINDER]  # todo round 3
        assert reminders(texts[3]) == [PLAN_REMINDER]  # plan round 5
        assert texts[3].splitlines()[-1] == PLAN_REMINDER


async def test_todo_reminder_every_third_call(connect: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        shown = await ok(
            c,
            "todo",
            {
                "items": [
                    {"content": "a", "status": "completed"},
                    {"content": "b", "status": "in_progress"},
                    {"content": "c", "status": "pending"},
                ]
            },
        )
        assert TODO_REMINDER not in text(shown)
        texts = await quiet_rounds(c, text, 7, "PlanList")  # no plans at all: still rounds
        for n, t in enumerate(texts, start=1):
            if n in (3, 6):
                assert t.splitlines()[-1] == TODO_REMINDER, f"call {n}: {t!r}"
                assert reminders(t) == [TODO_REMINDER]
            else:
                assert TODO_REMINDER not in t, f"call {n}"
        # A todo call restarts the count.
        await ok(c, "todo", {"items": [{"content": "c", "status": "in_progress"}]})
        texts = await quiet_rounds(c, text, 3, "PlanList")
        assert [reminders(t) for t in texts] == [[], [], [TODO_REMINDER]]


async def test_refused_calls_count_for_todo_reminder(connect: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        await ok(c, "todo", {"items": [{"content": "a", "status": "pending"}]})
        r1 = await c.call_tool("TaskList", {})  # no plan: refused
        # A refused todo call does not replace the list and does not restart the count.
        r2 = await c.call_tool("todo", {"items": [{"content": str(n)} for n in range(13)]})
        r3 = await c.call_tool("TaskGet", {"taskId": "abc"})
        assert r1.is_error and r2.is_error and r3.is_error
        assert TODO_REMINDER not in text(r1) + text(r2)
        assert text(r3).splitlines()[-1] == TODO_REMINDER


async def test_no_todo_reminder_when_all_items_completed(connect: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        await ok(
            c, "todo", {"items": [{"content": "a", "status": "completed"}, {"content": "b", "status": "completed"}]}
        )
        texts = await quiet_rounds(c, text, 9, "PlanList")
        assert all(TODO_REMINDER not in t for t in texts)
        await ok(c, "todo", {"items": []})  # an empty list has nothing unfinished either
        texts = await quiet_rounds(c, text, 6, "PlanList")
        assert all(TODO_REMINDER not in t for t in texts)


async def test_both_reminders_on_the_same_round(connect: Any, seed: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        await seed(c)
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "in_progress"})  # plan round 0
        await ok(c, "TaskList")  # plan round 1
        await ok(c, "todo", {"items": [{"content": "x", "status": "pending"}]})  # plan 2, todo 0
        texts = await quiet_rounds(c, text, 3, "PlanList")  # plan 3..5, todo 1..3
        assert reminders(texts[2]) == [PLAN_REMINDER, TODO_REMINDER]
        assert texts[2].splitlines()[-2:] == [PLAN_REMINDER, TODO_REMINDER]
