"""Promises: a held lock gives a bounded 'busy' refusal, never a hang; damaged files are
reported, never followed for writes, never overwritten; the rest keeps working."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from bench.audit import graph_problems, read_tasks
from planning_core.stores.files import FileStore
from server.mcp.app import build_server
from tests.support.files import tree_state
from tests.support.mcp import text_of
from tests.support.seed import chain, make_plan
from tests.support.waits import bound

PLAN = "2026-05-28-fragile"


def fragile_plan(root: Path, n: int = 3) -> Path:
    return make_plan(root, "fragile", chain(n))


async def test_held_lock_gives_busy_error_not_a_hang(tmp_path: Path) -> None:
    root = tmp_path / "root"
    folder = fragile_plan(root)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import filelock, sys, time; l = filelock.FileLock(sys.argv[1]); l.acquire(); "
            "print('held', flush=True); time.sleep(120)",
            str(folder / ".lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout and holder.stdout.readline().strip() == "held"
        before = tree_state(folder)
        with anyio.fail_after(bound(20)):
            async with Client(build_server(root, lock_timeout=0.5)) as c:
                t0 = time.monotonic()
                r = await c.call_tool("TaskCreate", {"subject": "x", "description": "y", "plan": PLAN})
                waited = time.monotonic() - t0
                assert r.is_error and "busy" in text_of(r).lower(), text_of(r)
                assert 0.4 <= waited < 5, waited
                r = await c.call_tool("TaskUpdate", {"taskId": 1, "status": "in_progress", "owner": "a", "plan": PLAN})
                assert r.is_error and "busy" in text_of(r).lower()
                r = await c.call_tool("TaskList", {"plan": PLAN})  # reads need no lock
                assert not r.is_error and "#3" in text_of(r)
        assert tree_state(folder) == before  # nothing written
    finally:
        holder.kill()
        holder.wait(bound(10))
    # Once the holder is gone (even killed), the lock is free at once.
    with anyio.fail_after(bound(20)):
        async with Client(build_server(root, lock_timeout=0.5)) as c:
            r = await c.call_tool("TaskCreate", {"subject": "x", "description": "y", "plan": PLAN})
            assert not r.is_error, text_of(r)


@pytest.fixture
def damaged(tmp_path: Path) -> dict[str, object]:
    """A plan with 5 tasks, then every kind of damage at once."""
    root = tmp_path / "sandbox" / "root"
    folder = fragile_plan(root, n=5)
    outside = tmp_path / "sandbox" / "outside.json"
    outside.write_text(json.dumps({"id": 5, "subject": "not yours", "status": "pending"}))
    secret = tmp_path / "sandbox" / "secret.txt"
    secret.write_text("do not touch\n")
    (folder / "task_2.json").write_bytes((folder / "task_2.json").read_bytes()[:25])  # truncated
    (folder / "task_3.json").write_text("{not json at all")
    (folder / "plan.md").unlink()
    (folder / "notes.txt").write_text("my notes\n")
    (folder / "task_abc.json").write_text("{}")
    (folder / ".highwatermark").write_text("1\n")  # too low
    (folder / "task_5.json").unlink()
    (folder / "task_5.json").symlink_to(outside)
    (folder / "task_9.json").symlink_to(secret)  # beyond every real id
    return {"root": root, "folder": folder, "outside": outside, "secret": secret, "sandbox": tmp_path / "sandbox"}


async def test_damaged_files_are_reported_and_never_written(damaged: dict[str, object]) -> None:
    root, folder = Path(str(damaged["root"])), Path(str(damaged["folder"]))
    sandbox = Path(str(damaged["sandbox"]))
    damaged_names = ["task_2.json", "task_3.json", "task_5.json", "task_9.json", "notes.txt", "task_abc.json"]
    before = {
        n: (folder / n).read_bytes() if not (folder / n).is_symlink() else os.readlink(folder / n)
        for n in damaged_names
    }
    outside_before = tree_state(sandbox, skip=root)
    with anyio.fail_after(bound(30)):
        async with Client(build_server(root, lock_timeout=2)) as c:
            r = await c.call_tool("TaskList", {"plan": PLAN})
            board = text_of(r)
            assert not r.is_error, board
            for name in ("task_2.json", "task_3.json", "task_5.json", "task_9.json"):
                assert name in board, f"{name} not reported in TaskList:\n{board}"
            assert "#1 [pending] t1" in board and "#4 [pending] t4" in board
            assert "notes.txt" not in board and "task_abc" not in board
            for tid in (2, 3, 5, 9):
                r = await c.call_tool("TaskGet", {"taskId": tid, "plan": PLAN})
                assert r.is_error and f"task_{tid}.json" in text_of(r), text_of(r)
            # Writes touching a damaged task are refused, naming the file.
            for args in (
                {"taskId": 2, "status": "completed"},
                {"taskId": 5, "subject": "overwrite via symlink"},
                {"taskId": 9, "status": "deleted"},
                {"taskId": 1, "addBlocks": [5]},
                {"taskId": 4, "addBlockedBy": ["#9"]},
                {"taskId": 3, "description": "fix by overwriting"},
            ):
                r = await c.call_tool("TaskUpdate", {**args, "plan": PLAN})
                assert r.is_error, (args, text_of(r))
            r = await c.call_tool("TaskCreate", {"subject": "n", "description": "", "blockedBy": [5], "plan": PLAN})
            assert r.is_error
            # The rest keeps working, with fresh ids despite the low high-water mark.
            r = await c.call_tool("TaskUpdate", {"taskId": 1, "status": "completed", "plan": PLAN})
            assert not r.is_error, text_of(r)
            ids = []
            for _ in range(2):
                r = await c.call_tool("TaskCreate", {"subject": "fresh", "description": "", "plan": PLAN})
                assert not r.is_error, text_of(r)
                ids.append(int(text_of(r).split("#")[1].split()[0]))
            assert ids == [10, 11], ids
            r = await c.call_tool("TaskUpdate", {"taskId": 11, "status": "deleted", "plan": PLAN})
            assert not r.is_error
            r = await c.call_tool("TaskCreate", {"subject": "after delete", "description": "", "plan": PLAN})
            assert "#12 " in text_of(r), text_of(r)  # a deleted id is never reused
            r = await c.call_tool("PlanList", {})
            assert not r.is_error and PLAN in text_of(r)
            res = await c.read_resource(f"plans://{PLAN}")
            assert "plan.md is missing" in res.contents[0].text
    for n, b in before.items():
        now = (folder / n).read_bytes() if not (folder / n).is_symlink() else os.readlink(folder / n)
        assert now == b, f"{n} was changed"
    assert tree_state(sandbox, skip=root) == outside_before  # symlink targets unchanged
    assert not (folder / "plan.md").exists()  # reported, not silently recreated
    FileStore(root).repair(PLAN)  # repair, too, leaves damaged files alone
    assert tree_state(sandbox, skip=root) == outside_before
    assert (folder / "task_2.json").read_bytes() == before["task_2.json"]
    _tasks, bad = read_tasks(folder)
    assert sorted(bad) == ["task_2.json", "task_3.json", "task_5.json", "task_9.json"]


async def test_symlinked_lock_highwatermark_and_plan_folder_are_not_followed(tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    root = sandbox / "root"
    folder = fragile_plan(root)
    target = sandbox / "victim.txt"
    target.write_text("precious\n")
    (folder / ".highwatermark").unlink()
    (folder / ".highwatermark").symlink_to(target)
    elsewhere = sandbox / "elsewhere"
    elsewhere.mkdir()
    (root / "todo" / "2026-05-28-linked").symlink_to(elsewhere)
    before = tree_state(sandbox, skip=root)
    with anyio.fail_after(bound(30)):
        async with Client(build_server(root, lock_timeout=2)) as c:
            r = await c.call_tool("TaskCreate", {"subject": "a", "description": "", "plan": PLAN})
            assert not r.is_error and "#4 " in text_of(r), text_of(r)  # the mark is replaced, not written through
            assert not (folder / ".highwatermark").is_symlink()
            r = await c.call_tool("TaskCreate", {"subject": "b", "description": "", "plan": "2026-05-28-linked"})
            assert r.is_error
            r = await c.call_tool("PlanList", {})
            assert "linked" not in text_of(r)
            (folder / ".lock").unlink(missing_ok=True)
            (folder / ".lock").symlink_to(target)
            snapshot = tree_state(folder)
            for args in ({"subject": "c", "description": ""},):
                r = await c.call_tool("TaskCreate", {**args, "plan": PLAN})
                assert r.is_error and ".lock" in text_of(r), text_of(r)  # a clear refusal, not a crash
            r = await c.call_tool("TaskUpdate", {"taskId": 1, "status": "completed", "plan": PLAN})
            assert r.is_error and ".lock" in text_of(r), text_of(r)
            assert tree_state(folder) == snapshot
    assert tree_state(sandbox, skip=root) == before
    tasks, bad = read_tasks(folder)
    assert bad == [] and graph_problems(tasks) == []
