"""A misspelled argument is refused, never taken silently: every tool (the board app's
included) answers a tool error naming the unknown key and the nearest one it takes, and
changes nothing, on every store and in both connection modes. `tools/list` is not one
character longer for it (the check is the server's, not `additionalProperties: false`)."""

from __future__ import annotations

from typing import Any

import pytest

from planning_core.store import PlanStore
from server.board.page import APP_TOOL
from tests.support.stores import stored_state, stored_tasks

TASKS = [{"subject": "first", "description": "d"}, {"subject": "second", "description": "d"}]
PLAN = {"title": "Spelling", "analysis": "a", "approach": "b", "name": "spelling", "tasks": TASKS}

# tool, arguments with one misspelled key, the key, the argument it should have been.
MISSPELLED = [
    ("PlanCreate", {**PLAN, "name": "other", "aproach": "b"}, "aproach", "approach"),
    ("PlanList", {"includedone": True}, "includedone", "includeDone"),
    ("PlanArchive", {"forse": True}, "forse", "force"),
    ("TaskCreate", {"subject": "s", "descripton": "d"}, "descripton", "description"),
    ("TaskUpdate", {"taskId": 2, "stauts": "completed"}, "stauts", "status"),
    ("TaskUpdate", {"taskId": 2, "status": "in_progress", "ownr": "bob"}, "ownr", "owner"),
    ("TaskList", {"staus": "ready"}, "staus", "status"),
    ("TaskGet", {"task_id": 1}, "task_id", "taskId"),
    ("todo", {"items": [{"content": "c", "status": "pending"}], "topik": "t"}, "topik", "topic"),
    (APP_TOOL, {"plna": "spelling"}, "plna", "plan"),
]


async def test_each_tool_refuses_a_misspelled_argument_and_changes_nothing(
    connect: Any, ok: Any, text: Any, store: PlanStore
) -> None:
    async with connect() as c:
        plan = (await ok(c, "PlanCreate", PLAN)).structured_content["plan"]["name"]
        before = stored_state(store)
        for tool, arguments, key, nearest in MISSPELLED:
            refused = await c.call_tool(tool, arguments)
            assert refused.is_error, f"{tool} {arguments}: {text(refused)}"
            assert text(refused).startswith(
                f"Invalid arguments for {tool}: {key}: unknown argument (did you mean {nearest}?)"
            ), text(refused)
            assert stored_state(store) == before, f"{tool} {arguments} changed the store"
    tasks = stored_tasks(store, plan)
    assert tasks[2]["status"] == "pending" and not tasks[2].get("owner")


async def test_a_misspelled_required_argument_is_named_with_the_rest_that_is_missing(
    connect: Any, ok: Any, text: Any
) -> None:
    async with connect() as c:
        await ok(c, "PlanCreate", PLAN)
        refused = await c.call_tool("TaskCreate", {"descripton": "d"})
        assert refused.is_error
        assert text(refused).startswith(
            "Invalid arguments for TaskCreate: descripton: unknown argument (did you mean description?); "
            "subject: Field required. Fix them and call again."
        ), text(refused)
        nothing_near = await c.call_tool("PlanList", {"zzz": 1})
        assert text(nothing_near).startswith(
            "Invalid arguments for PlanList: zzz: unknown argument (known: includeDone). Fix them and call again."
        ), text(nothing_near)


@pytest.mark.parametrize(
    ("tool", "arguments", "where", "nearest"),
    [
        ("PlanCreate", {**PLAN, "tasks": [{"subject": "s", "descripton": "d"}]}, "tasks.0.descripton", "description"),
        ("todo", {"items": [{"content": "c", "staus": "pending"}]}, "items.0.staus", "status"),
    ],
)
async def test_a_misspelled_field_inside_an_argument_names_the_nearest(
    connect: Any, text: Any, store: PlanStore, tool: str, arguments: dict[str, Any], where: str, nearest: str
) -> None:
    async with connect() as c:
        before = stored_state(store)
        refused = await c.call_tool(tool, arguments)
        assert refused.is_error
        assert f"{where}: unknown field (did you mean {nearest}?)" in text(refused), text(refused)
        assert stored_state(store) == before
