"""The eight tools through a real in-memory MCP client, in both connection modes:
names and schemas, the seed story, the exact texts, every refusal a tool makes,
the current plan, completion and the todo reset."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from planning_core.store import PlanStore
from planning_core.stores.files import FileStore
from tests.support.seed import PLAN_NAME, SUBJECTS
from tests.support.stores import stored_plan, stored_state, stored_tasks

TOOLS = {"PlanCreate", "PlanList", "PlanArchive", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "todo"}
READ_ONLY = {"PlanList", "TaskList", "TaskGet"}
TOOLS_LIST_LIMIT = 8000


# -- tools/list --------------------------------------------------------------------------


async def test_tools_list_names_schemas_hints_and_size(connect: Any, record_property: Any) -> None:
    async with connect() as c:
        listed = await c.list_tools()
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == TOOLS
    assert len(listed.tools) == 8
    for name, tool in tools.items():
        assert tool.description and tool.description.strip(), name
        assert tool.output_schema and tool.output_schema.get("type") == "object", name
        assert tool.input_schema.get("type") == "object", name
        read_only = bool(tool.annotations and tool.annotations.read_only_hint)
        assert read_only is (name in READ_ONLY), f"{name}: readOnlyHint={read_only}"
    # Parameter names are the contract's (camelCase).
    assert {
        "taskId",
        "status",
        "addBlockedBy",
        "addBlocks",
        "removeBlockedBy",
        "removeBlocks",
        "metadata",
        "plan",
    } <= set(tools["TaskUpdate"].input_schema["properties"])
    assert {"subject", "description", "activeForm", "blockedBy", "blocks", "owner", "metadata", "plan"} <= set(
        tools["TaskCreate"].input_schema["properties"]
    )
    size = len(json.dumps(listed.model_dump(mode="json", by_alias=True, exclude_none=True)))
    record_property("tools_list_chars", size)
    print(f"tools/list size: {size} chars")
    assert size < TOOLS_LIST_LIMIT


# -- the seed story ----------------------------------------------------------------------


async def test_seed_story(connect: Any, seed: Any, ok: Any, text: Any) -> None:
    block = f'# Active Plans\n- {PLAN_NAME} [2/4 done] current: "{SUBJECTS[2]}"'
    async with connect() as c:
        assert "# Active Plans\n(none)" in (c.instructions or "")
        created = await seed(c)
        assert created.structured_content["plan"]["name"] == PLAN_NAME
        assert created.structured_content["taskIds"] == [1, 2, 3, 4]
        assert PLAN_NAME in text(created)
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "completed"})
        await ok(c, "TaskUpdate", {"taskId": 2, "status": "completed"})
        await ok(c, "TaskUpdate", {"taskId": 3, "status": "in_progress"})

        listed = await ok(c, "PlanList")
        assert text(listed) == f'{PLAN_NAME} [2/4 done] current: "{SUBJECTS[2]}"'
        plan = listed.structured_content["plans"][0]
        assert plan["name"] == PLAN_NAME and plan["current"] == SUBJECTS[2]

        active = (await c.read_resource("plans://active")).contents[0]
        assert active.text == block

    # Instructions are computed when a client connects: a new server on the same root sees the plan.
    async with connect() as c2:
        assert block in (c2.instructions or "")
        assert "PlanCreate" in (c2.instructions or "")


async def test_plan_as_stored(connect: Any, seed: Any, store: PlanStore) -> None:
    async with connect() as c:
        await seed(c)
    md = stored_plan(store, PLAN_NAME)[0]  # files: todo/<name>/plan.md
    assert md.startswith("# Add auth")
    for heading in ("## Analysis", "## Approach", "## Steps"):
        assert heading in md
    task2 = stored_tasks(store, PLAN_NAME)[2]  # files: task_2.json
    assert task2["subject"] == SUBJECTS[1] and task2["blockedBy"] == [1] and task2["blocks"] == [3]
    assert task2["status"] == "pending"


# -- exact texts -------------------------------------------------------------------------


async def test_exact_texts_and_ids(connect: Any, seed: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        await seed(c)
        created = await ok(c, "TaskCreate", {"subject": "Write docs", "description": "README", "blockedBy": [1, 2]})
        assert text(created) == "Task #5 created successfully: Write docs"
        assert created.structured_content["task"]["id"] == 5

        updated = await ok(c, "TaskUpdate", {"taskId": 5, "owner": "alice", "subject": "Write the docs"})
        assert text(updated).startswith("Updated task #5 ")
        first = text(updated).splitlines()[0]
        assert "subject" in first and "owner" in first and "status" not in first

        # Only fields that changed are reported.
        same = await ok(c, "TaskUpdate", {"taskId": 5, "owner": "alice"})
        assert text(same).startswith("Updated task #5 ")
        assert "owner" not in text(same)

        await ok(c, "TaskUpdate", {"taskId": 1, "status": "completed"})
        board = text(await ok(c, "TaskList"))
        assert board.splitlines() == [
            f"{PLAN_NAME} [1/5 done]",
            f"#1 [completed] {SUBJECTS[0]}",
            f"#2 [pending] {SUBJECTS[1]}",
            f"#3 [pending] {SUBJECTS[2]} [blocked by #2]",
            f"#4 [pending] {SUBJECTS[3]} [blocked by #3]",
            "#5 [pending] Write the docs (alice) [blocked by #2]",  # #1 is done: open blockers only
        ]

        # Ids: 3, "3" and "#3" name the same task.
        for tid in (3, "3", "#3", " #3 "):
            got = await ok(c, "TaskGet", {"taskId": tid})
            assert got.structured_content["task"]["id"] == 3
            assert text(got).startswith(f"Task #3: {SUBJECTS[2]}")
        detail = text(await ok(c, "TaskGet", {"taskId": "#5"}))
        for part in ("Write the docs", "pending", "alice", "README", "#1, #2"):
            assert part in detail


async def test_a_task_without_a_description_is_created_as_in_plancreate(
    connect: Any, seed: Any, ok: Any, text: Any
) -> None:
    """`description` is optional on TaskCreate as in PlanCreate's tasks: left out, it is empty."""
    async with connect() as c:
        listed = {t.name: t for t in (await c.list_tools()).tools}
        assert "description" not in listed["TaskCreate"].input_schema.get("required", [])
        await seed(c)
        created = await ok(c, "TaskCreate", {"subject": "Tidy up"})
        assert text(created) == "Task #5 created successfully: Tidy up"
        got = await ok(c, "TaskGet", {"taskId": 5})
        assert got.structured_content["task"]["description"] == ""


async def test_task_list_pages_and_filters(connect: Any, seed: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        await seed(c)
        page1 = await ok(c, "TaskList", {"limit": 3})
        lines = text(page1).splitlines()
        assert lines[0] == f"{PLAN_NAME} [0/4 done]"
        assert [ln.split()[0] for ln in lines[1:4]] == ["#1", "#2", "#3"]
        cursor = page1.structured_content["nextCursor"]
        assert cursor and "cursor" in lines[-1] and cursor in lines[-1]

        page2 = await ok(c, "TaskList", {"limit": 3, "cursor": cursor})
        lines2 = text(page2).splitlines()
        assert lines2[1:] == [f"#4 [pending] {SUBJECTS[3]} [blocked by #3]"]
        assert "nextCursor" not in page2.structured_content or not page2.structured_content["nextCursor"]

        exact = await ok(c, "TaskList", {"limit": 4})
        assert "cursor" not in text(exact)

        ready = await ok(c, "TaskList", {"status": "ready"})
        assert [t["id"] for t in ready.structured_content["tasks"]] == [1]
        blocked = await ok(c, "TaskList", {"status": "blocked"})
        assert [t["id"] for t in blocked.structured_content["tasks"]] == [2, 3, 4]
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "in_progress", "owner": "bob"})
        mine = await ok(c, "TaskList", {"owner": "bob"})
        assert text(mine).splitlines()[1:] == [f"#1 [in_progress] {SUBJECTS[0]} (bob)"]


async def test_every_success_has_structured_content(connect: Any, seed: Any, ok: Any, tmp_path: Path) -> None:
    # `ok` asserts structured content; walk every tool once.
    async with connect() as c:
        await seed(c)
        await ok(c, "PlanList", {"includeDone": True})
        await ok(c, "TaskCreate", {"subject": "Extra", "description": "x", "metadata": {"k": 1}})
        await ok(c, "TaskUpdate", {"taskId": 5, "metadata": {"k": None, "j": 2}})
        got = await ok(c, "TaskGet", {"taskId": 5})
        assert got.structured_content["task"]["metadata"] == {"j": 2}  # null removes a key
        await ok(c, "TaskList")
        await ok(c, "todo", {"items": [{"content": "a", "status": "completed"}]})
        await ok(c, "TaskUpdate", {"taskId": 5, "status": "deleted"})
        await ok(c, "PlanArchive", {"force": True})


# -- refusals ---------------------------------------------------------------------------

LONG_META = {"blob": "x" * (16 * 1024 + 10)}


async def _claim_alice(c: Any, ok: Any) -> None:
    await ok(c, "TaskUpdate", {"taskId": 1, "status": "in_progress", "owner": "alice"})


# (id, setup, tool, args, substrings the message must contain)
REFUSALS: list[tuple[str, Any, str, dict[str, Any], list[str]]] = [
    ("cycle", None, "TaskUpdate", {"taskId": 1, "addBlockedBy": [2]}, ["cycle #1 -> #2 -> #1"]),
    (
        "cycle-create",
        None,
        "TaskCreate",
        {"subject": "s", "description": "d", "blockedBy": [4], "blocks": [1]},
        ["cycle #5 -> #1 -> #2 -> #3 -> #4 -> #5"],
    ),
    ("unknown-add", None, "TaskUpdate", {"taskId": 2, "addBlockedBy": [98, 99]}, ["#98", "#99"]),
    ("unknown-task", None, "TaskUpdate", {"taskId": 42, "status": "completed"}, ["#42"]),
    ("unknown-create", None, "TaskCreate", {"subject": "s", "description": "d", "blockedBy": [77]}, ["#77"]),
    ("unknown-get", None, "TaskGet", {"taskId": 99}, ["#99"]),
    ("blocked-start", None, "TaskUpdate", {"taskId": 3, "status": "in_progress"}, ["#3", "#2"]),
    (
        "claim-conflict",
        _claim_alice,
        "TaskUpdate",
        {"taskId": 1, "status": "in_progress", "owner": "bob"},
        ["#1", "alice", "in progress"],
    ),
    ("archive-unfinished", None, "PlanArchive", {}, ["#1, #2, #3, #4", "force"]),
    (
        "plan-dotdot",
        None,
        "TaskCreate",
        {"subject": "s", "description": "d", "plan": "../x"},
        ["Invalid plan name '../x'"],
    ),
    ("plan-abs", None, "TaskCreate", {"subject": "s", "description": "d", "plan": "/etc/passwd"}, ["/etc/passwd"]),
    (
        "plan-upper",
        None,
        "TaskUpdate",
        {"taskId": 1, "status": "completed", "plan": "2026-01-01-UP"},
        ["2026-01-01-UP"],
    ),
    ("plan-nul", None, "TaskList", {"plan": "2026-05-28-add\x00auth"}, ["Invalid plan name"]),
    (
        "plan-missing",
        None,
        "TaskCreate",
        {"subject": "s", "description": "d", "plan": "2026-01-01-nope"},
        ["2026-01-01-nope", PLAN_NAME],
    ),
    (
        "slug-dotdot",
        None,
        "PlanCreate",
        {"title": "t", "analysis": "a", "approach": "b", "name": "../x"},
        ["'../x'", "a-z, 0-9"],
    ),
    ("slug-upper", None, "PlanCreate", {"title": "t", "analysis": "a", "approach": "b", "name": "UP"}, ["'UP'"]),
    (
        "bad-date",
        None,
        "PlanCreate",
        {"title": "t", "analysis": "a", "approach": "b", "date": "2026-13-01"},
        ["2026-13-01"],
    ),
    (
        "plan-create-bad-position",
        None,
        "PlanCreate",
        {
            "title": "t",
            "analysis": "a",
            "approach": "b",
            "tasks": [{"subject": "x", "description": "", "blockedBy": [9]}],
        },
        ["position 9", "Nothing was created"],
    ),
    (
        "plan-create-cycle",
        None,
        "PlanCreate",
        {
            "title": "t",
            "analysis": "a",
            "approach": "b",
            "tasks": [
                {"subject": "x", "description": "", "blockedBy": [2]},
                {"subject": "y", "description": "", "blockedBy": [1]},
            ],
        },
        ["cycle", "Nothing was created"],
    ),
    ("taskid-abc", None, "TaskUpdate", {"taskId": "abc", "status": "completed"}, ["'abc'"]),
    ("taskid-zero", None, "TaskUpdate", {"taskId": 0, "status": "completed"}, ["Invalid task id 0"]),
    ("taskid-negative", None, "TaskUpdate", {"taskId": -5, "status": "completed"}, ["Invalid task id -5"]),
    ("subject-201", None, "TaskCreate", {"subject": "s" * 201, "description": "d"}, ["subject", "limit is 200"]),
    ("update-subject-201", None, "TaskUpdate", {"taskId": 1, "subject": "s" * 201}, ["subject", "limit is 200"]),
    ("description-20001", None, "TaskCreate", {"subject": "s", "description": "d" * 20_001}, ["description", "20,000"]),
    (
        "metadata-16k",
        None,
        "TaskCreate",
        {"subject": "s", "description": "d", "metadata": LONG_META},
        ["metadata", "16 KB"],
    ),
    ("update-metadata-16k", None, "TaskUpdate", {"taskId": 1, "metadata": LONG_META}, ["metadata", "16 KB"]),
    (
        "todo-13",
        None,
        "todo",
        {"items": [{"content": f"i{n}", "status": "pending"} for n in range(13)]},
        ["at most 12", "13"],
    ),
    (
        "todo-two-running",
        None,
        "todo",
        {"items": [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}]},
        ["Only one item may be in_progress"],
    ),
    (
        "type-blockedby",
        None,
        "TaskCreate",
        {"subject": "s", "description": "d", "blockedBy": "garbage"},
        ["blockedBy", "valid list"],
    ),
    ("type-limit", None, "TaskList", {"limit": "many"}, ["limit"]),
    ("limit-too-big", None, "TaskList", {"limit": 5000}, ["limit", "1000"]),
    ("type-status", None, "TaskUpdate", {"taskId": 1, "status": "done"}, ["status"]),
    ("missing-arg", None, "TaskCreate", {"description": "no subject"}, ["subject"]),
]


@pytest.mark.parametrize(
    ("setup", "tool", "args", "needles"),
    [pytest.param(*case[1:], id=case[0]) for case in REFUSALS],
)
async def test_refusal_is_tool_error_changes_nothing_and_server_keeps_serving(
    connect: Any,
    seed: Any,
    ok: Any,
    text: Any,
    store: PlanStore,
    setup: Any,
    tool: str,
    args: dict[str, Any],
    needles: list[str],
) -> None:
    async with connect() as c:
        await seed(c)
        if setup is not None:
            await setup(c, ok)
        before = stored_state(store)
        board_before = text(await ok(c, "TaskList"))
        result = await c.call_tool(tool, args)  # a protocol error would raise here
        message = text(result)
        assert result.is_error is True, f"expected a refusal, got: {message}"
        for needle in needles:
            assert needle in message, f"{needle!r} not in {message!r}"
        assert stored_state(store) == before, "a refused call changed what is stored"
        assert text(await ok(c, "TaskList")) == board_before
        if isinstance(store, FileStore):  # a name with ../ in it reached no path either
            assert not (store.root / "x").exists() and not (store.root.parent / "x").exists()


async def test_cycle_message_names_the_cycle(connect: Any, seed: Any, text: Any) -> None:
    async with connect() as c:
        await seed(c)
        result = await c.call_tool("TaskUpdate", {"taskId": 1, "addBlockedBy": [2]})
        assert result.is_error
        m = re.search(r"#(\d+) -> #(\d+) -> #\1\b", text(result))
        assert m and {m.group(1), m.group(2)} == {"1", "2"}, text(result)

        longer = await c.call_tool("TaskUpdate", {"taskId": 1, "addBlockedBy": ["#4"]})
        assert longer.is_error
        assert re.search(r"#(\d) -> #\d -> #\d -> #\d -> #\1\b", text(longer)), text(longer)


async def test_no_current_plan_lists_the_active_plans(connect: Any, ok: Any, text: Any, store: PlanStore) -> None:
    async with connect() as c:
        a = await ok(c, "PlanCreate", {"title": "Alpha", "analysis": "a", "approach": "b", "date": "2026-05-01"})
        b = await ok(c, "PlanCreate", {"title": "Beta", "analysis": "a", "approach": "b", "date": "2026-05-02"})
    names = [a.structured_content["plan"]["name"], b.structured_content["plan"]["name"]]
    assert names == ["2026-05-01-alpha", "2026-05-02-beta"]
    # A new server has a new session with no current plan; two plans are active.
    async with connect() as c2:
        before = stored_state(store)
        for tool, args in [
            ("TaskList", {}),
            ("TaskCreate", {"subject": "s", "description": "d"}),
            ("TaskUpdate", {"taskId": 1, "status": "completed"}),
            ("PlanArchive", {"force": True}),
        ]:
            result = await c2.call_tool(tool, args)
            assert result.is_error, tool
            for name in names:
                assert name in text(result), (tool, text(result))
        assert stored_state(store) == before
        await ok(c2, "TaskList", {"plan": names[0]})


async def test_no_plan_at_all_says_plancreate(connect: Any, text: Any) -> None:
    async with connect() as c:
        result = await c.call_tool("TaskList", {})
        assert result.is_error and "PlanCreate" in text(result)
        listed = await c.call_tool("PlanList", {})
        assert not listed.is_error and "PlanCreate" in text(listed)


async def test_archive_refuses_then_force_moves_to_done(
    connect: Any, seed: Any, ok: Any, text: Any, store: PlanStore
) -> None:
    async with connect() as c:
        await seed(c)
        refused = await c.call_tool("PlanArchive", {"plan": PLAN_NAME})
        assert refused.is_error and "force" in text(refused)
        assert not store.is_archived(PLAN_NAME)
        stored = stored_plan(store, PLAN_NAME)

        archived = await ok(c, "PlanArchive", {"plan": PLAN_NAME, "force": True})
        assert store.location(PLAN_NAME) in text(archived)  # files: done/<name>
        assert store.is_archived(PLAN_NAME) and store.active_plans() == []
        assert stored_plan(store, PLAN_NAME) == stored  # moved, not deleted
        listed = text(await ok(c, "PlanList"))
        assert listed.startswith("No active plans: 1 plan is archived") and "includeDone=true" in listed
        assert PLAN_NAME in text(await ok(c, "PlanList", {"includeDone": True}))
        # An archived plan is read-only.
        refused = await c.call_tool("TaskCreate", {"subject": "s", "description": "d", "plan": PLAN_NAME})
        assert refused.is_error


async def test_archive_finished_plan_without_force(connect: Any, ok: Any, store: PlanStore) -> None:
    async with connect() as c:
        await ok(
            c,
            "PlanCreate",
            {
                "title": "Small",
                "analysis": "a",
                "approach": "b",
                "date": "2026-05-03",
                "tasks": [{"subject": "only", "description": ""}],
            },
        )
        await ok(c, "TaskUpdate", {"taskId": 1, "status": "completed"})
        await ok(c, "PlanArchive", {})
    assert store.archived_plans() == ["2026-05-03-small"] and list(stored_tasks(store, "2026-05-03-small")) == [1]


# -- current plan --------------------------------------------------------------------------


async def test_current_plan_is_last_created_or_named(connect: Any, ok: Any) -> None:
    async with connect() as c:
        await ok(c, "PlanCreate", {"title": "Alpha", "analysis": "a", "approach": "b", "date": "2026-05-01"})
        await ok(c, "PlanCreate", {"title": "Beta", "analysis": "a", "approach": "b", "date": "2026-05-02"})
        made = await ok(c, "TaskCreate", {"subject": "in beta", "description": ""})
        assert made.structured_content["plan"] == "2026-05-02-beta"

        await ok(c, "TaskList", {"plan": "2026-05-01-alpha"})  # naming a plan makes it current
        made = await ok(c, "TaskCreate", {"subject": "in alpha", "description": ""})
        assert made.structured_content["plan"] == "2026-05-01-alpha"
        listed = await ok(c, "TaskList")
        assert listed.structured_content["plan"]["name"] == "2026-05-01-alpha"
        assert [t["subject"] for t in listed.structured_content["tasks"]] == ["in alpha"]

        await ok(c, "PlanCreate", {"title": "Alpha", "analysis": "a", "approach": "b", "date": "2026-05-01"})
        again = await ok(c, "TaskList")
        assert again.structured_content["plan"]["name"] == "2026-05-01-alpha-2"  # folder exists: -2 appended


async def test_slug_from_title(connect: Any, ok: Any) -> None:
    async with connect() as c:
        made = await ok(
            c, "PlanCreate", {"title": "  Fix: the BIG bug!! ", "analysis": "a", "approach": "b", "date": "2026-05-04"}
        )
        assert made.structured_content["plan"]["name"] == "2026-05-04-fix-the-big-bug"
        made = await ok(c, "PlanCreate", {"title": "添加认证", "analysis": "a", "approach": "b", "date": "2026-05-04"})
        assert made.structured_content["plan"]["name"] == "2026-05-04-tian-jia-ren-zheng"
        made = await ok(
            c, "PlanCreate", {"title": "x", "analysis": "a", "approach": "b", "date": "2026-05-04", "name": "my-slug"}
        )
        assert made.structured_content["plan"]["name"] == "2026-05-04-my-slug"


# -- completion, unblocking, todo reset ----------------------------------------------------


async def test_completion_names_unblocked_and_all_done(connect: Any, seed: Any, ok: Any, text: Any) -> None:
    async with connect() as c:
        await seed(c)
        done1 = await ok(c, "TaskUpdate", {"taskId": 1, "status": "completed"})
        assert f"#2 {SUBJECTS[1]}" in text(done1)
        assert done1.structured_content["unblocked"] == [2]
        assert not done1.structured_content["allDone"]
        for tid in (2, 3):
            await ok(c, "TaskUpdate", {"taskId": tid, "status": "in_progress"})
            await ok(c, "TaskUpdate", {"taskId": tid, "status": "completed"})
        last = await ok(c, "TaskUpdate", {"taskId": 4, "status": "completed"})
        assert last.structured_content["allDone"] is True
        assert "all tasks" in text(last).lower() and "PlanArchive" in text(last)
        assert "plan.md" in text(last)

        # completed -> pending is allowed (reopen after a failed check).
        reopened = await ok(c, "TaskUpdate", {"taskId": 4, "status": "pending"})
        assert reopened.structured_content["status"] == "pending"
        assert text(await ok(c, "PlanList")).startswith(f"{PLAN_NAME} [3/4 done]")


async def test_delete_removes_file_and_links(connect: Any, seed: Any, ok: Any, text: Any, store: PlanStore) -> None:
    async with connect() as c:
        await seed(c)
        deleted = await ok(c, "TaskUpdate", {"taskId": "#2", "status": "deleted"})
        assert text(deleted).startswith("Updated task #2 ")
        assert 2 not in stored_tasks(store, PLAN_NAME)
        t1 = (await ok(c, "TaskGet", {"taskId": 1})).structured_content["task"]
        t3 = (await ok(c, "TaskGet", {"taskId": 3})).structured_content["task"]
        assert 2 not in t1["blocks"] and 2 not in t3["blockedBy"]
        made = await ok(c, "TaskCreate", {"subject": "new", "description": ""})
        assert made.structured_content["task"]["id"] == 5  # ids are never reused


@pytest.mark.parametrize("transition", ["in_progress", "completed"])
async def test_starting_or_completing_resets_todo(connect: Any, seed: Any, ok: Any, text: Any, transition: str) -> None:
    todo_reminder = "<reminder>Your todo list has unfinished items. Update it with the todo tool.</reminder>"
    async with connect() as c:
        await seed(c)
        shown = await ok(
            c,
            "todo",
            {
                "items": [
                    {"content": "read code", "status": "in_progress"},
                    {"content": "write code", "status": "pending"},
                ],
                "topic": "step",
            },
        )
        assert text(shown).splitlines()[1:] == ["[>] read code", "[ ] write code"]
        result = await ok(c, "TaskUpdate", {"taskId": 1, "status": transition})
        assert "todo" in text(result).lower() and "reset" in text(result).lower()
        assert result.structured_content["todoReset"] is True
        for _ in range(4):  # the 3rd call after a todo call would carry the todo reminder
            assert todo_reminder not in text(await ok(c, "PlanList"))
        # A change that neither starts nor completes a task leaves the list alone.
        await ok(c, "todo", {"items": [{"content": "a", "status": "pending"}]})
        other = await ok(c, "TaskUpdate", {"taskId": 4, "subject": "Add logout endpoint (v2)"})
        assert other.structured_content["todoReset"] is False
        assert "reset" not in text(other).lower()
