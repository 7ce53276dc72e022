"""Promise: a kill -9 at any instant leaves every file parseable, loses nothing
acknowledged, leaves no lock behind, and its temp files are ignored then cleaned."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from planning_core import FileStore

from ._disk import graph_problems, read_tasks
from .crashkit import Tally, audit, one_round, setup, temp_files

KILLS = int(os.environ.get("RELIABILITY_KILLS", "220"))
REPO = Path(__file__).resolve().parents[2]
FIGURES: dict[str, object] = {}


def test_kill_9_writers_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    plan = setup(root)
    folder = root / "todo" / plan
    tally = Tally()
    rng = random.Random(7)
    for _ in range(KILLS):
        one_round(root, plan, tally, rng)
        problems = audit(root, plan, tally)
        assert problems == [], f"after kill {tally.rounds}: {problems}"
    assert tally.killed >= 200
    assert len(tally.acked) >= KILLS // 5, "the writers hardly wrote anything; the test proves nothing"

    # A leftover temp file (one is planted in case the kills left none) is ignored by reads ...
    planted = folder / f".task_{max(tally.acked) + 1}.json.99999.deadbeef.tmp"
    planted.write_text('{"id": ')
    left = temp_files(folder)
    snap = FileStore(root).snapshot(plan)
    assert not snap.corrupt and max(snap.tasks) <= max(tally.acked) + 1
    # ... and cleaned by a server start (which also rewrites lagging `blocks`).
    params = StdioServerParameters(command=sys.executable, args=["-m", "server", "--root", str(root)], cwd=str(REPO))

    async def start_server() -> None:
        with anyio.fail_after(60):
            async with Client(params) as c:
                r = await c.call_tool("TaskList", {"plan": plan, "limit": 5})
                assert not r.is_error

    anyio.run(start_server)
    assert temp_files(folder) == []
    tasks, bad = read_tasks(folder)
    assert bad == [] and graph_problems(tasks) == []  # mirror images restored on disk
    assert tally.acked <= set(tasks)
    FIGURES.update(
        kills=tally.killed,
        rounds=tally.rounds,
        acked_ids=len(tally.acked),
        acked_edges=len(tally.acked_edges),
        temp_files_left_by_kills=len(left) - 1,
        max_temp_files_seen=tally.temp_files_seen,
    )
    print(f"\ncrash figures: {FIGURES}")


def test_repair_cleans_temp_files_and_mirrors(tmp_path: Path) -> None:
    root = tmp_path / "root"
    plan = setup(root)
    tally = Tally()
    rng = random.Random(11)
    for _ in range(15):
        one_round(root, plan, tally, rng)
    folder = root / "todo" / plan
    (folder / ".task_1.json.4242.0badc0de.tmp").write_bytes(b"{")
    FileStore(root).repair(plan)
    assert temp_files(folder) == []
    tasks, bad = read_tasks(folder)
    assert bad == [] and graph_problems(tasks) == [] and tally.acked <= set(tasks)


def test_kill_9_real_servers(tmp_path: Path) -> None:
    """The same audit, killing real `python -m server` processes mid-stream (slower: a few rounds)."""
    from .crashkit import server_round

    root = tmp_path / "root"
    plan = setup(root)
    tally = Tally()
    rng = random.Random(3)
    for _ in range(int(os.environ.get("RELIABILITY_SERVER_KILLS", "4"))):
        server_round(root, plan, tally, rng, sys.executable)
        problems = audit(root, plan, tally)
        assert problems == [], f"after server kill {tally.rounds}: {problems}"
    assert tally.acked, "no create was acknowledged before the kills"
    FIGURES.update(server_kills=tally.killed, server_acked_ids=len(tally.acked))
    print(f"\nserver-kill figures: {FIGURES}")
