"""A client that only connects (Claude Code's `claude mcp list` health check: initialize,
list, disconnect) leaves nothing in the project: the planning folder is made by the first
plan written, not by the server starting. A root that could never be made is still refused
at start, in one line."""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp.types import ResourceListChangedNotification

from planning_core import Planner
from planning_core.errors import StorageError
from planning_core.stores.files import FileStore
from tests.support.mcp import connect, script_params, text_of
from tests.support.procs import run_cli

WAIT = 10.0


async def test_a_connect_that_lists_everything_creates_no_folder(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    root = project / ".planning"
    async with connect(script_params(root, project), tmp_path / "err.log") as client:
        await client.list_tools()
        await client.list_prompts()
        await client.list_resources()
        assert text_of(await client.call_tool("PlanList", {})).startswith("No plans yet.")
    assert list(project.iterdir()) == []


async def test_the_first_plan_makes_the_folder_and_the_change_feed_follows_it(tmp_path: Path) -> None:
    """The feed waits for a root not there yet and watches it once made: a plan another
    process writes after that is announced (list_changed), as with a root made at start."""
    root = tmp_path / "project" / ".planning"
    root.parent.mkdir()
    changed = anyio.Event()

    async def inbox(message: object) -> None:
        if isinstance(message, ResourceListChangedNotification):
            changed.set()

    async with connect(
        script_params(root, root.parent), tmp_path / "err.log", mode="legacy", message_handler=inbox
    ) as client:
        assert not root.exists()
        made = await client.call_tool("PlanCreate", {"title": "First", "analysis": "a", "approach": "b"})
        assert not made.is_error, text_of(made)
        assert (root / "todo").is_dir()
        with anyio.fail_after(WAIT):
            await changed.wait()  # this server's own plan, seen by the feed
        changed = anyio.Event()
        Planner(FileStore(root)).create_plan("Second, from elsewhere", analysis="a", approach="b")
        with anyio.fail_after(WAIT):
            await changed.wait()
    assert "polling" not in (tmp_path / "err.log").read_text(encoding="utf-8")  # the feed, not the fallback


def test_a_root_that_cannot_be_made_is_refused_at_start_and_nothing_is_created(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n", encoding="utf-8")
    r = run_cli(["--root", str(blocker / "sub" / ".planning")])
    assert r.returncode == 2
    # Refused before anything is made: its parent is missing (a path through a file cannot exist).
    assert f"--root {blocker / 'sub' / '.planning'} is in a folder that does not exist" in r.stderr
    assert blocker.read_text(encoding="utf-8") == "not a folder\n"


def test_prepare_checks_a_missing_root_without_making_it(tmp_path: Path) -> None:
    root = tmp_path / "deep" / "er" / ".planning"
    FileStore(root).prepare()
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "file").write_text("", encoding="utf-8")
    try:
        FileStore(tmp_path / "file" / ".planning").prepare()
    except StorageError as e:
        assert "is not a folder" in str(e)
    else:
        raise AssertionError("a root under a file was accepted")
