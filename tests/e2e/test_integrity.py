"""Through a real `python -m server` over stdio: at the last task id TaskCreate is refused
and writes nothing; a link to a task that has no file is dropped at start, said on stderr."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from planning_core.names import MAX_TASK_ID
from tests.support.files import tree_state
from tests.support.mcp import connect, server_params, text_of
from tests.support.seed import PLAN_DATE, make_plan
from tests.support.waits import bound

PLAN = f"{PLAN_DATE}-ids"


def _files(folder: Path) -> dict[str, str]:
    return tree_state(folder, ignore={".lock"})


def test_three_creates_at_the_limit_are_refused_and_write_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    folder = make_plan(root, "ids", [{"subject": "first"}])
    (folder / ".highwatermark").write_text(f"{MAX_TASK_ID - 1}\n")  # a hand edit
    errlog = tmp_path / "server.stderr"

    async def session() -> None:
        with anyio.fail_after(bound(60)):
            async with connect(server_params(root, tmp_path), errlog) as c:
                last = await c.call_tool("TaskCreate", {"plan": PLAN, "subject": "the last one", "description": "x"})
                assert not last.is_error and f"Task #{MAX_TASK_ID} created" in text_of(last), text_of(last)
                before = _files(folder)
                for subject in ("a", "b", "c"):
                    r = await c.call_tool(
                        "TaskCreate", {"plan": PLAN, "subject": subject, "description": "x", "blockedBy": [1]}
                    )
                    said = text_of(r)
                    assert r.is_error, said
                    assert f"used its last task id (#{MAX_TASK_ID})" in said and "Nothing was written" in said
                    assert "created" not in said
                assert _files(folder) == before
                got = await c.call_tool("TaskGet", {"plan": PLAN, "taskId": MAX_TASK_ID})
                assert not got.is_error and "the last one" in text_of(got)
                listed = await c.call_tool("TaskList", {"plan": PLAN})
                assert "the last one" in text_of(listed) and "unreadable" not in text_of(listed).lower()

    anyio.run(session)


def test_a_link_to_a_missing_task_is_dropped_at_start_and_said(tmp_path: Path) -> None:
    root = tmp_path / "root"
    tasks: list[dict[str, Any]] = [
        {"subject": "gone"},
        {"subject": "left behind", "blockedBy": [1]},
        {"subject": "kept", "blockedBy": [4]},
    ]
    tasks.append({"subject": "unreadable"})
    folder = make_plan(root, "ids", tasks, title="Links")
    (folder / "task_1.json").unlink()
    (folder / "task_4.json").write_text("{ damaged")  # unreadable is not missing: #3 keeps its link
    errlog = tmp_path / "server.stderr"

    async def session() -> None:
        with anyio.fail_after(bound(60)):
            async with connect(server_params(root, tmp_path), errlog) as c:
                got = await c.call_tool("TaskGet", {"plan": PLAN, "taskId": 2})
                task, _, history = text_of(got).partition("History (latest first):")
                assert not got.is_error and "#1" not in task
                assert "-#1" in history  # the repair's drop of the link is in the task's history

    anyio.run(session)
    assert "dropped links to tasks that have no file: #2 -> #1" in errlog.read_text()
    assert json.loads((folder / "task_2.json").read_text())["blockedBy"] == []
    assert json.loads((folder / "task_3.json").read_text())["blockedBy"] == [4]
