"""The tools' `plan` argument takes what the CLI takes, a full name or a unique
part of one, by one rule (planning_core.names.match_plan); a current plan that vanished
under the server is reported as such. Real server objects over a temp root."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from server.cli import main
from tests.support.seed import PLAN_NAME

AUDIT = "2026-05-29-add-audit-log"


async def _two_plans(c: Any, seed: Any, ok: Any) -> None:
    await seed(c)
    await ok(c, "PlanCreate", {"title": "Add audit log", "analysis": "a", "approach": "b", "date": "2026-05-29"})


async def test_a_unique_part_works_in_every_tool(connect: Any, seed: Any, ok: Any, text: Any, root: Path) -> None:
    async with connect() as c:
        await _two_plans(c, seed, ok)
        listed = await ok(c, "TaskList", {"plan": "add-auth"})
        assert listed.structured_content["plan"]["name"] == PLAN_NAME
        got = await ok(c, "TaskGet", {"taskId": 1, "plan": "auth"})
        assert got.structured_content["plan"] == PLAN_NAME
        made = await ok(c, "TaskCreate", {"subject": "s", "description": "d", "plan": "audit"})
        assert made.structured_content["plan"] == AUDIT
        # Naming a plan by a part makes that plan (by its full name) the current one.
        made = await ok(c, "TaskCreate", {"subject": "t", "description": "d"})
        assert made.structured_content["plan"] == AUDIT
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "in_progress", "plan": "05-28"})
        assert (await ok(c, "TaskGet", {"taskId": 1})).structured_content["plan"] == PLAN_NAME
        archived = await ok(c, "PlanArchive", {"plan": "audit-log", "force": True})
        assert f"done/{AUDIT}" in text(archived)
        # An archived plan is found by a part too: readable, and read-only.
        assert (await ok(c, "TaskList", {"plan": "audit"})).structured_content["plan"]["name"] == AUDIT
        refused = await c.call_tool("TaskCreate", {"subject": "s", "description": "d", "plan": "audit"})
        assert refused.is_error and "read-only" in text(refused)


async def test_ambiguous_and_unknown_parts_are_refused(
    connect: Any, seed: Any, ok: Any, text: Any, root: Path, tree: Any
) -> None:
    async with connect() as c:
        await _two_plans(c, seed, ok)
        before = tree(root)
        refused = await c.call_tool("TaskCreate", {"subject": "s", "description": "d", "plan": "add"})
        assert refused.is_error
        assert text(refused) == (
            f"Plan 'add' matches several plans: {PLAN_NAME}, {AUDIT}. Give the full name or a longer part of it."
        )
        refused = await c.call_tool("TaskUpdate", {"taskId": 1, "status": "completed", "plan": "deploy"})
        assert refused.is_error
        assert text(refused) == f"Plan 'deploy' not found. Active plans: {PLAN_NAME}, {AUDIT}."
        for bad in ("../add-auth", "/etc/passwd", "add auth", "Add-Auth"):
            refused = await c.call_tool("TaskList", {"plan": bad})
            assert refused.is_error and text(refused).startswith(f"Invalid plan name {bad!r}"), text(refused)
        assert tree(root) == before


async def test_the_cli_and_the_tools_follow_one_rule(
    connect: Any, seed: Any, ok: Any, text: Any, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with connect() as c:
        await _two_plans(c, seed, ok)
        for part in ("add-auth", "audit"):
            tool = (await ok(c, "TaskList", {"plan": part})).structured_content["plan"]["name"]
            assert main(["board", part, "--json", "--root", str(root)]) == 0
            assert f'"name": "{tool}"' in capsys.readouterr().out
        refused = await c.call_tool("TaskList", {"plan": "add"})
    assert main(["board", "add", "--root", str(root)]) == 1
    assert capsys.readouterr().err == f"planning-mcp: {text(refused)}\n"


async def test_current_plan_removed_under_the_server(connect: Any, seed: Any, ok: Any, text: Any, root: Path) -> None:
    async with connect() as c:
        await seed(c)
        shutil.rmtree(root / "todo" / PLAN_NAME)
        refused = await c.call_tool("TaskList", {})
        assert refused.is_error
        assert text(refused) == (
            f"The session's current plan {PLAN_NAME} is no longer an active plan: it was removed or "
            "renamed outside this server. Nothing was changed. There are no active plans; "
            "call PlanCreate to start one."
        )
