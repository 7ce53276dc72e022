"""Resources and prompts through a real in-memory client."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from tests.support.seed import ANALYSIS, APPROACH, PLAN_NAME, SUBJECTS


async def read(c: Any, uri: str) -> Any:
    result = await c.read_resource(uri)
    assert len(result.contents) == 1
    return result.contents[0]


async def test_active_plans_resource(connect: Any, seed: Any, ok: Any) -> None:
    async with connect() as c:
        listed = await c.list_resources()
        active = next(r for r in listed.resources if str(r.uri) == "plans://active")
        assert active.mime_type == "text/markdown"
        templates = {t.uri_template for t in (await c.list_resource_templates()).resource_templates}
        assert templates == {"plans://{name}", "plans://{name}/tasks/{id}"}

        empty = await read(c, "plans://active")
        assert empty.text == "# Active Plans\n(none)"
        assert empty.mime_type == "text/markdown"

        await seed(c)
        assert (await read(c, "plans://active")).text == f"# Active Plans\n- {PLAN_NAME} [0/4 done]"
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "in_progress"})
        await ok(c, "PlanCreate", {"title": "Later plan", "analysis": "a", "approach": "b", "date": "2026-05-29"})
        # One line per active plan, oldest first; ` current:` only when a task is in progress.
        assert (await read(c, "plans://active")).text == (
            f'# Active Plans\n- {PLAN_NAME} [0/4 done] current: "{SUBJECTS[0]}"\n- 2026-05-29-later-plan [0/0 done]'
        )
        await ok(c, "PlanArchive", {"force": True, "plan": "2026-05-29-later-plan"})
        assert "later-plan" not in (await read(c, "plans://active")).text


async def test_plan_resource_has_plan_md_and_board(connect: Any, seed: Any, ok: Any) -> None:
    async with connect() as c:
        await seed(c, steps=["Schema first", "Then middleware"])
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "completed"})
        content = await read(c, f"plans://{PLAN_NAME}")
        assert content.mime_type == "text/markdown"
        body = content.text
        assert body.startswith("# Add auth")
        for part in (
            "## Analysis",
            ANALYSIS,
            "## Approach",
            APPROACH,
            "## Steps",
            "1. Schema first",
            "2. Then middleware",
            f"{PLAN_NAME} [1/4 done]",
            f"#1 [completed] {SUBJECTS[0]}",
            f"#2 [pending] {SUBJECTS[1]}",
            f"#3 [pending] {SUBJECTS[2]} [blocked by #2]",
        ):
            assert part in body, part
        # plan.md comes first, then the board.
        assert body.index("## Steps") < body.index(f"#1 [completed] {SUBJECTS[0]}")


async def test_task_resource_is_the_task_as_json(connect: Any, seed: Any, ok: Any) -> None:
    async with connect() as c:
        await seed(c)
        await ok(c, "TaskUpdate", {"taskId": 2, "owner": "alice", "metadata": {"pr": 12}})
        content = await read(c, f"plans://{PLAN_NAME}/tasks/2")
        assert content.mime_type == "application/json"
        task = json.loads(content.text)
        assert task["id"] == 2
        assert task["subject"] == SUBJECTS[1]
        assert task["status"] == "pending"
        assert task["blockedBy"] == [1] and task["blocks"] == [3]
        assert task["owner"] == "alice" and task["metadata"] == {"pr": 12}
        assert {"description", "activeForm", "createdAt", "updatedAt"} <= set(task)


@pytest.mark.parametrize(
    "uri",
    [
        "plans://2026-01-01-nope",  # well-formed, not there
        "plans://2026-01-01-UP",  # not a plan name
        "plans://not-a-plan",
        "plans://..",
        "plans://%2E%2E%2Fetc",
        f"plans://{PLAN_NAME}/tasks/99",  # unknown task
        f"plans://{PLAN_NAME}/tasks/abc",
        f"plans://{PLAN_NAME}/tasks/0",
        f"plans://{PLAN_NAME}/tasks/..%2F..%2Fplan.md",
        "plans://2026-01-01-nope/tasks/1",
        "plans://../../etc/passwd",
    ],
)
async def test_bad_resource_uris_are_errors_not_crashes(connect: Any, seed: Any, ok: Any, uri: str) -> None:
    async with connect() as c:
        await seed(c)
        with pytest.raises(MCPError):
            await c.read_resource(uri)
        # The server keeps serving.
        assert (await read(c, "plans://active")).text.startswith("# Active Plans")
        await ok(c, "TaskList")


async def test_unknown_task_resource_error_is_actionable(connect: Any, seed: Any) -> None:
    async with connect() as c:
        await seed(c)
        with pytest.raises(MCPError) as info:
            await c.read_resource(f"plans://{PLAN_NAME}/tasks/99")
        assert "#99" in str(info.value)


async def test_resources_of_an_archived_plan_stay_readable(connect: Any, seed: Any, ok: Any) -> None:
    async with connect() as c:
        await seed(c)
        await ok(c, "PlanArchive", {"force": True})
        assert (await read(c, f"plans://{PLAN_NAME}")).text.startswith("# Add auth")
        assert json.loads((await read(c, f"plans://{PLAN_NAME}/tasks/1")).text)["id"] == 1


# -- prompts -------------------------------------------------------------------------------


async def prompt_text(c: Any, name: str, args: dict[str, str] | None = None) -> str:
    result = await c.get_prompt(name, args or {})
    return "\n".join(m.content.text for m in result.messages)


async def test_prompts_are_listed(connect: Any) -> None:
    async with connect() as c:
        prompts = {p.name: p for p in (await c.list_prompts()).prompts}
    assert set(prompts) == {"plan-mode", "resume", "verify"}
    plan_mode_args = {a.name: a.required for a in prompts["plan-mode"].arguments or []}
    assert plan_mode_args == {"task": True}
    verify_args = {a.name: a.required for a in prompts["verify"].arguments or []}
    assert verify_args == {"plan": False}
    assert not prompts["resume"].arguments


async def test_plan_mode_prompt(connect: Any) -> None:
    async with connect() as c:
        body = await prompt_text(c, "plan-mode", {"task": "Add OAuth login to the admin panel"})
    assert "Add OAuth login to the admin panel" in body
    low = body.lower()
    for word in ("read-only", "review", "plancreate", "blockedby"):
        assert word in low, word


async def test_resume_prompt_mentions_ready_tasks(connect: Any, seed: Any, ok: Any) -> None:
    async with connect() as c:
        empty = await prompt_text(c, "resume")
        assert "# Active Plans\n(none)" in empty
        await seed(c)
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "completed"})
        await ok(c, "TaskCreate", {"subject": "Write docs", "description": ""})
        body = await prompt_text(c, "resume")
    assert f"# Active Plans\n- {PLAN_NAME} [1/5 done]" in body
    assert f"{PLAN_NAME} #2 {SUBJECTS[1]}" in body  # unblocked by #1
    assert f"{PLAN_NAME} #5 Write docs" in body  # never blocked
    assert f"#3 {SUBJECTS[2]}" not in body  # still blocked
    assert f"#1 {SUBJECTS[0]}" not in body  # done
    assert "ready" in body.lower()


async def test_verify_prompt(connect: Any, seed: Any) -> None:
    async with connect() as c:
        await seed(c)
        for args in ({}, {"plan": PLAN_NAME}):  # default: the current plan
            body = await prompt_text(c, "verify", args)
            assert PLAN_NAME in body
            low = body.lower()
            for check in ("automated", "functional", "request"):
                assert check in low, check
            assert "plan.md" in body
            assert ANALYSIS in body and APPROACH in body  # plan.md itself
            assert "reopen" in low or "back to pending" in low
            assert "PlanArchive" in body
        bad = await prompt_text(c, "verify", {"plan": "../etc"})
        assert "Cannot verify" in bad
