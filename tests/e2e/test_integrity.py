"""Through a real `python -m server` over stdio: at the last task id TaskCreate is refused
and writes nothing; a link to a task that has no file is dropped at start, said on stderr."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from planning_core import FileStore, Planner
from planning_core.names import MAX_TASK_ID

from ._support import PLAN_DATE, child_env

PLAN = f"{PLAN_DATE}-ids"


def _params(root: Path, cwd: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "server", "--root", str(root)], env=child_env(), cwd=str(cwd)
    )


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != ".lock"}


def _text(result: object) -> str:
    return "\n".join(getattr(b, "text", "") for b in getattr(result, "content", []))


def test_three_creates_at_the_limit_are_refused_and_write_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    store = FileStore(root)
    store.ensure_writable()
    Planner(store).create_plan("Ids", name="ids", date=PLAN_DATE, tasks=[{"subject": "first"}])
    folder = root / "todo" / PLAN
    (folder / ".highwatermark").write_text(f"{MAX_TASK_ID - 1}\n")  # a hand edit
    errlog = tmp_path / "server.stderr"

    async def session() -> None:
        with anyio.fail_after(60), errlog.open("w") as err:
            async with Client(stdio_client(_params(root, tmp_path), errlog=err)) as c:
                last = await c.call_tool("TaskCreate", {"plan": PLAN, "subject": "the last one", "description": "x"})
                assert not last.is_error and f"Task #{MAX_TASK_ID} created" in _text(last), _text(last)
                before = _files(folder)
                for subject in ("a", "b", "c"):
                    r = await c.call_tool(
                        "TaskCreate", {"plan": PLAN, "subject": subject, "description": "x", "blockedBy": [1]}
                    )
                    assert r.is_error, _text(r)
                    assert f"used its last task id (#{MAX_TASK_ID})" in _text(r) and "Nothing was written" in _text(r)
                    assert "created" not in _text(r)
                assert _files(folder) == before
                got = await c.call_tool("TaskGet", {"plan": PLAN, "taskId": MAX_TASK_ID})
                assert not got.is_error and "the last one" in _text(got)
                listed = await c.call_tool("TaskList", {"plan": PLAN})
                assert "the last one" in _text(listed) and "unreadable" not in _text(listed).lower()

    anyio.run(session)


def test_a_link_to_a_missing_task_is_dropped_at_start_and_said(tmp_path: Path) -> None:
    root = tmp_path / "root"
    store = FileStore(root)
    store.ensure_writable()
    tasks: list[dict[str, Any]] = [
        {"subject": "gone"},
        {"subject": "left behind", "blockedBy": [1]},
        {"subject": "kept", "blockedBy": [4]},
    ]
    tasks.append({"subject": "unreadable"})
    Planner(store).create_plan("Links", name="ids", date=PLAN_DATE, tasks=tasks)
    folder = root / "todo" / PLAN
    (folder / "task_1.json").unlink()
    (folder / "task_4.json").write_text("{ damaged")  # unreadable is not missing: #3 keeps its link
    errlog = tmp_path / "server.stderr"

    async def session() -> None:
        with anyio.fail_after(60), errlog.open("w") as err:
            async with Client(stdio_client(_params(root, tmp_path), errlog=err)) as c:
                got = await c.call_tool("TaskGet", {"plan": PLAN, "taskId": 2})
                assert not got.is_error and "#1" not in _text(got)

    anyio.run(session)
    assert "dropped links to tasks that have no file: #2 -> #1" in errlog.read_text()
    assert json.loads((folder / "task_2.json").read_text())["blockedBy"] == []
    assert json.loads((folder / "task_3.json").read_text())["blockedBy"] == [4]
