"""What the server answers must be true, in both protocol modes: the right JSON-RPC
error code with the reason, every active plan in resources/list, booleans refused as
ids, and file reads kept off the event loop."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.support.seed import PLAN_NAME, SUBJECTS
from tests.support.waits import bound

INVALID_PARAMS = -32602


def not_found_code(mode: str) -> int:
    # 2025 specs: -32002 Resource not found; 2026-07-28: -32602 (SEP-2164).
    return -32002 if mode == "legacy" else INVALID_PARAMS


# -- prompts/get -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments", "named"),
    [
        pytest.param("no-such-prompt", {}, "no-such-prompt", id="unknown-prompt-with-the-reason"),
        pytest.param("plan-mode", {}, "task", id="missing-argument-naming-it"),
    ],
)
async def test_a_bad_prompts_get_is_invalid_params(
    connect: Any, name: str, arguments: dict[str, str], named: str
) -> None:
    async with connect() as c:
        with pytest.raises(MCPError) as info:
            await c.get_prompt(name, arguments)
        assert info.value.code == INVALID_PARAMS
        assert named in info.value.message and "plan-mode" in info.value.message
        # The server keeps serving.
        assert (await c.get_prompt("plan-mode", {"task": "x"})).messages


# -- resources/read ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "reason"),
    [
        ("plans://2026-01-01-nope", "2026-01-01-nope"),
        (f"plans://{PLAN_NAME}/tasks/99", "#99"),
        ("plans://2026-01-01-nope/tasks/1", "2026-01-01-nope"),
    ],
)
async def test_missing_resource_is_resource_not_found_with_the_reason(
    connect: Any, seed: Any, mode: str, uri: str, reason: str
) -> None:
    async with connect() as c:
        await seed(c)
        with pytest.raises(MCPError) as info:
            await c.read_resource(uri)
        assert info.value.code == not_found_code(mode), info.value.error
        assert reason in info.value.message
        assert info.value.data == {"uri": uri}


async def test_unreadable_task_is_an_internal_error_with_the_reason(connect: Any, seed: Any, root: Path) -> None:
    async with connect() as c:
        await seed(c)
        (root / "todo" / PLAN_NAME / "task_2.json").write_text("{ not json", encoding="utf-8")
        with pytest.raises(MCPError) as info:
            await c.read_resource(f"plans://{PLAN_NAME}/tasks/2")
        assert info.value.code == -32603
        assert "task_2.json" in info.value.message or "#2" in info.value.message


# -- cursors -----------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["list_tools", "list_prompts", "list_resources", "list_resource_templates"])
async def test_a_cursor_we_never_issued_is_invalid_params(connect: Any, method: str) -> None:
    async with connect() as c:
        with pytest.raises(MCPError) as info:
            await getattr(c, method)(cursor="garbage", cache_mode="bypass")
        assert info.value.code == INVALID_PARAMS
        assert "cursor" in info.value.message.lower()
        # Without a cursor the whole list comes back, with no next page.
        listed = await getattr(c, method)(cache_mode="bypass")
        assert listed.next_cursor is None


# -- resources/list ----------------------------------------------------------------------


async def test_resources_list_names_every_active_plan(connect: Any, seed: Any, ok: Any) -> None:
    async with connect() as c:
        assert [str(r.uri) for r in (await c.list_resources(cache_mode="bypass")).resources] == ["plans://active"]
        await seed(c)
        await ok(c, "PlanCreate", {"title": "Later plan", "analysis": "a", "approach": "b", "date": "2026-05-29"})
        listed = {str(r.uri): r for r in (await c.list_resources(cache_mode="bypass")).resources}
        assert list(listed) == ["plans://active", f"plans://{PLAN_NAME}", "plans://2026-05-29-later-plan"]
        plan = listed[f"plans://{PLAN_NAME}"]
        assert (plan.name, plan.title, plan.mime_type) == (PLAN_NAME, "Add auth", "text/markdown")
        assert listed["plans://2026-05-29-later-plan"].title == "Later plan"
        # What is listed can be read.
        assert (await c.read_resource(f"plans://{PLAN_NAME}")).contents[0].text.startswith("# Add auth")

        await ok(c, "PlanArchive", {"plan": "2026-05-29-later-plan", "force": True})
        uris = [str(r.uri) for r in (await c.list_resources(cache_mode="bypass")).resources]
        assert uris == ["plans://active", f"plans://{PLAN_NAME}"]


# -- booleans are not ids ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("TaskUpdate", {"taskId": True, "status": "completed"}, "taskId"),
        ("TaskUpdate", {"taskId": False, "subject": "changed"}, "taskId"),
        ("TaskGet", {"taskId": True}, "taskId"),
        ("TaskUpdate", {"taskId": 2, "addBlockedBy": [True]}, "addBlockedBy"),
        ("TaskUpdate", {"taskId": 2, "addBlocks": [True]}, "addBlocks"),
        ("TaskUpdate", {"taskId": 2, "removeBlockedBy": [True]}, "removeBlockedBy"),
        ("TaskUpdate", {"taskId": 2, "removeBlocks": [False]}, "removeBlocks"),
        ("TaskCreate", {"subject": "s", "description": "d", "blockedBy": [True]}, "blockedBy"),
        ("TaskCreate", {"subject": "s", "description": "d", "blocks": [True]}, "blocks"),
        ("TaskUpdate", {"taskId": 1.0, "status": "completed"}, "taskId"),
        (
            "PlanCreate",
            {
                "title": "T",
                "analysis": "a",
                "approach": "b",
                "tasks": [{"subject": "x"}, {"subject": "y", "blockedBy": [True]}],
            },
            "blockedBy",
        ),
    ],
)
async def test_booleans_are_refused_as_ids_and_nothing_changes(
    connect: Any, seed: Any, root: Path, tree: Any, text: Any, tool: str, args: dict[str, Any], field: str
) -> None:
    async with connect() as c:
        await seed(c)
        before = tree(root)
        result = await c.call_tool(tool, args)
        assert result.is_error, text(result)
        message = text(result)
        assert field in message and message.startswith(f"Invalid arguments for {tool}"), message
        assert tree(root) == before
        # Real ids still work, as numbers and as strings.
        ok = await c.call_tool("TaskGet", {"taskId": "#1"})
        assert not ok.is_error and SUBJECTS[0] in text(ok)


# -- file reads off the event loop -------------------------------------------------------


def fifo_valve(fifo: Path, go: threading.Event, stop: threading.Event) -> None:
    """Let a reader blocked on `fifo` go: open the writing end without blocking (it fails
    with ENXIO until a reader waits) and close it at once. Runs in its own thread, after
    `go` or after VALVE_DELAY at the latest, so a frozen event loop cannot hang the test."""
    go.wait(VALVE_DELAY)
    while not stop.is_set():
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        time.sleep(0.05)


VALVE_DELAY = 8.0


def waits_on_a_fifo() -> bool:
    """Some thread of this process is blocked opening a FIFO for reading: Linux shows it
    as the kernel function it sleeps in (wchan), fifo_open's wait_for_partner."""
    for wchan in Path("/proc/self/task").glob("*/wchan"):
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            if wchan.read_text() == "wait_for_partner":
                return True
    return False


async def test_taskget_of_a_fifo_never_stalls_other_requests(connect: Any, seed: Any, root: Path, text: Any) -> None:
    """A FIFO named like a task file: TaskGet of it must not hold up the other requests,
    whatever it answers (the core may refuse it without opening it)."""
    async with connect() as c:
        await seed(c)
        fifo = root / "todo" / PLAN_NAME / "task_5.json"
        os.mkfifo(fifo)
        go, stop = threading.Event(), threading.Event()
        valve = threading.Thread(target=fifo_valve, args=(fifo, go, stop), daemon=True)
        valve.start()
        answers: list[Any] = []

        async def get() -> None:
            answers.append(await c.call_tool("TaskGet", {"taskId": 5}))

        try:
            async with anyio.create_task_group() as tg:
                started = time.monotonic()
                tg.start_soon(get)
                # The handshake: TaskGet answered, or a thread of ours waits in the FIFO's
                # open. Bounded: if neither comes (a frozen loop), `waited` below says so.
                with anyio.move_on_after(VALVE_DELAY):
                    while not (answers or waits_on_a_fifo()):
                        await anyio.sleep(0.01)
                listed = await c.call_tool("TaskList", {})
                waited = time.monotonic() - started
                go.set()
        finally:
            stop.set()
            valve.join(bound(5))
        assert f"#1 [pending] {SUBJECTS[0]}" in text(listed)
        assert waited < VALVE_DELAY / 2, f"TaskList waited {waited:.1f}s behind TaskGet of a FIFO"
        assert answers and answers[0].is_error, text(answers[0])
