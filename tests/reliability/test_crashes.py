"""Promise: a kill -9 at any instant leaves every file parseable, loses nothing
acknowledged, leaves no lock behind, and its temp files are ignored then cleaned."""

from __future__ import annotations

import os
import random
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bench.audit import dangling, graph_problems, read_tasks, temp_files
from bench.crashkit import (
    LOCK_TIMEOUT,
    PLAN_DATE,
    PLAN_SLUG,
    Tally,
    audit,
    one_round,
    run_killed_at,
    server_round,
    setup,
)
from planning_core import Planner
from planning_core.actions import Actions
from planning_core.history import Event
from planning_core.stores.files import FileStore, historyread
from server.commands.serve import _recover
from server.common.cli_common import command_caller
from tests.support.files import edit_task
from tests.support.mcp import server_params
from tests.support.waits import bound

KILLS = int(os.environ.get("RELIABILITY_KILLS", "220"))
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
    # Exactly the task files are read (not the temp file). Not `<= max(acked) + 1`: two kills in a
    # row, each after its write and before its acknowledgement, rightly leave two unacknowledged tasks.
    on_disk = {int(p.name[5:-5]) for p in folder.glob("task_*.json")}
    assert not snap.corrupt and set(snap.tasks) == on_disk
    # ... and cleaned by a server start (which also rewrites lagging `blocks`).
    params = server_params(root)

    async def start_server() -> None:
        with anyio.fail_after(bound(60)):
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


# -- a kill at every disk write of every writing operation ------------------------------

SEED: list[dict[str, Any]] = [
    {"subject": "one"},
    {"subject": "two", "blockedBy": [1]},
    {"subject": "three", "blockedBy": [2]},
    {"subject": "four", "blockedBy": [1]},
    {"subject": "five"},
]
SEED_EDGES = {(2, 1), (3, 2), (4, 1)}  # (task, its blocker)
PLAN = f"{PLAN_DATE}-{PLAN_SLUG}"
SECOND = f"{PLAN_DATE}-second"
Tasks = dict[int, dict[str, Any]]


@dataclass(frozen=True)
class Op:
    """One writing operation, and what it must have done once acknowledged."""

    run: Callable[[Planner], object]
    done: Callable[[Tasks], bool]
    removes: frozenset[tuple[int, int]] = frozenset()  # seed edges it takes away
    deletes: int | None = None
    damaged: bool = False  # the seed has a lagging `blocks`, a link to a missing #9, a temp file


def _blocked(task: int, by: int) -> Callable[[Tasks], bool]:
    return lambda t: by in t[task]["blockedBy"] and task in t[by]["blocks"]


OPS: dict[str, Op] = {
    "create": Op(lambda p: p.create_task(PLAN, "new"), lambda t: 6 in t),
    "create blockedBy": Op(
        lambda p: p.create_task(PLAN, "new", blocked_by=[1, 5]), lambda t: _blocked(6, 1)(t) and _blocked(6, 5)(t)
    ),
    "create blocks": Op(
        lambda p: p.create_task(PLAN, "new", blocks=[3, 5]), lambda t: _blocked(3, 6)(t) and _blocked(5, 6)(t)
    ),
    "create both": Op(
        lambda p: p.create_task(PLAN, "new", blocked_by=[4], blocks=[3]),
        lambda t: _blocked(6, 4)(t) and _blocked(3, 6)(t),
    ),
    "addBlockedBy": Op(lambda p: p.update_task(PLAN, 5, add_blocked_by=[3]), _blocked(5, 3)),
    "addBlocks": Op(lambda p: p.update_task(PLAN, 5, add_blocks=[4]), _blocked(4, 5)),
    "removeBlockedBy": Op(
        lambda p: p.update_task(PLAN, 3, remove_blocked_by=[2]),
        lambda t: 2 not in t[3]["blockedBy"],
        frozenset({(3, 2)}),
    ),
    "removeBlocks": Op(
        lambda p: p.update_task(PLAN, 1, remove_blocks=[4]), lambda t: 1 not in t[4]["blockedBy"], frozenset({(4, 1)})
    ),
    "remove link to missing": Op(
        lambda p: p.update_task(PLAN, 5, remove_blocked_by=[9]), lambda t: t[5]["blockedBy"] == [], damaged=True
    ),
    "complete": Op(lambda p: p.update_task(PLAN, 1, status="completed"), lambda t: t[1]["status"] == "completed"),
    "edit": Op(
        lambda p: p.update_task(PLAN, 4, subject="renamed", metadata={"k": 1}), lambda t: t[4]["subject"] == "renamed"
    ),
    "delete": Op(
        lambda p: p.update_task(PLAN, 2, status="deleted"), lambda t: 2 not in t, frozenset({(2, 1), (3, 2)}), deletes=2
    ),
    "PlanCreate": Op(lambda p: p.create_plan("Second", name="second", date=PLAN_DATE, tasks=SEED), lambda t: True),
    "PlanArchive": Op(lambda p: p.archive(PLAN, force=True), lambda t: True),
    "repair": Op(lambda p: p.store.repair(PLAN), lambda t: t[5]["blockedBy"] == [], damaged=True),  # type: ignore[attr-defined]
}


def _seed(root: Path, damaged: bool) -> None:
    Planner(FileStore(root)).create_plan("Crash", name=PLAN_SLUG, date=PLAN_DATE, tasks=SEED)
    if damaged:  # what a crash of an older version or a hand edit leaves
        folder = root / "todo" / PLAN
        edit_task(folder, 1, blocks=[2])
        edit_task(folder, 5, blockedBy=[9])
        (folder / ".task_3.json.4242.0badc0de.tmp").write_text("{")


def _plan_folders(root: Path) -> list[Path]:
    return [
        f
        for top in ("todo", "done")
        if (root / top).is_dir()
        for f in sorted((root / top).iterdir())
        if f.name[0] != "."
    ]


def _replayed(seed: Tasks, events: list[Event]) -> dict[int, tuple[str, list[int], str]]:
    """The tasks (status, blockedBy, subject) the seed becomes by the events the log holds."""
    tasks = {i: (t["status"], sorted(t["blockedBy"]), t["subject"]) for i, t in seed.items()}
    for e in events:
        if e.op == "created" and e.task is not None and e.status:
            tasks[e.task] = (e.status[1], sorted(e.blocked_by_added), e.subject)
        elif e.op == "deleted":
            tasks.pop(e.task or 0, None)
            tasks = {i: (st, [b for b in bs if b != e.task], su) for i, (st, bs, su) in tasks.items()}
        elif e.op == "updated" and e.task in tasks:
            status, blocked, subject = tasks[e.task]
            blocked = sorted((set(blocked) | set(e.blocked_by_added)) - set(e.blocked_by_removed))
            tasks[e.task] = (
                e.status[1] if e.status else status,
                blocked,
                e.subject if "subject" in e.fields else subject,
            )
    return tasks


def _log_problems(root: Path, template: Path) -> list[str]:
    """After the restart, the log and the tasks agree: the seed replayed by the events the
    log recorded after it is exactly the tasks on disk; the plan is in done/ exactly when an
    archive is recorded; a second plan exists only with its own log."""
    seed_folder = template / "todo" / PLAN
    seed, _ = read_tasks(seed_folder)
    before = len(historyread.read_all(str(seed_folder), archived=False))
    main = root / "todo" / PLAN if (root / "todo" / PLAN).is_dir() else root / "done" / PLAN
    entries = historyread.read_all(str(main), archived=main.parent.name == "done")
    events = [e for entry in entries[before:] for e in entry.events]
    tasks, _ = read_tasks(main)
    actual = {i: (t["status"], sorted(t["blockedBy"]), t["subject"]) for i, t in tasks.items()}
    problems = []
    if _replayed(seed, events) != actual:
        problems.append(f"the log {[e.to_dict() for e in events]} does not give the tasks {actual}")
    if any(e.op == "archived" for e in events) != (main.parent.name == "done"):
        problems.append(f"the log says archived: {[e.op for e in events]}, the plan is in {main.parent.name}/")
    second = root / "todo" / SECOND
    if second.is_dir():
        logged = [e.op for entry in historyread.read_all(str(second), archived=False) for e in entry.events]
        problems += [] if logged == ["plan-created"] else [f"the second plan's log is {logged}"]
    return problems


def _after_kill(root: Path, op: Op, acknowledged: bool) -> list[str]:
    """The audit of one kill point: before the restart, then after it."""
    problems = []
    for folder in _plan_folders(root):
        tasks, bad = read_tasks(folder)
        problems += [f"{folder.name}: unparseable {bad}"] if bad else []
        problems += [] if op.damaged else [f"{folder.name} before restart: {p}" for p in dangling(folder)]
    _recover(Actions.over(FileStore(root)), command_caller("serve"))  # what every server start does
    for folder in _plan_folders(root):
        tasks, _ = read_tasks(folder)
        problems += [f"{folder.name} after restart: {p}" for p in graph_problems(tasks) + dangling(folder)]
        if folder.parent.name == "todo" and temp_files(folder):
            problems.append(f"{folder.name}: temp files left {temp_files(folder)}")
        if folder.name == SECOND and len(tasks) != len(SEED):
            problems.append(f"PlanCreate left a partial plan: {sorted(tasks)}")
    main = root / "todo" / PLAN if (root / "todo" / PLAN).is_dir() else root / "done" / PLAN
    tasks, _ = read_tasks(main)
    lost = sorted(set(range(1, len(SEED) + 1)) - set(tasks) - {op.deletes})
    problems += [f"acknowledged tasks lost {lost}"] if lost else []
    edges = [(a, b) for a, b in SEED_EDGES - op.removes if a in tasks and b not in tasks[a]["blockedBy"]]
    problems += [f"acknowledged links lost {edges}"] if edges else []
    if acknowledged:
        if not op.done(tasks):
            problems.append("the acknowledged operation is not on disk")
        if op.run is OPS["PlanArchive"].run and main.parent.name != "done":
            problems.append("the acknowledged archive is not in done/")
        if op.run is OPS["PlanCreate"].run and not (root / "todo" / SECOND).is_dir():
            problems.append("the acknowledged PlanCreate is not in todo/")
    if main.parent.name == "todo":  # the plan still takes writes: no lock was left behind
        Planner(FileStore(root, lock_timeout=LOCK_TIMEOUT)).create_task(PLAN, "after the restart")
    return problems


def test_a_kill_at_every_write_point_of_every_writing_operation(tmp_path: Path) -> None:
    points: dict[str, int] = {}
    for name, op in OPS.items():
        template = tmp_path / f"seed-{len(points)}"
        _seed(template, op.damaged)
        runs = 0
        total: int | None = None
        while total is None or runs <= total:
            root = tmp_path / "run"
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(template, root, symlinks=True)
            kill_at = -1 if total is None else runs
            killed, writes = run_killed_at(root, op.run, kill_at)
            if total is None:  # the first run counts the op's disk writes, uninterrupted
                total = writes
                assert total > 0 and not killed
            else:
                assert killed == (kill_at < total), f"{name}: kill point {kill_at} of {total}"
                runs += 1
            problems = _after_kill(root, op, acknowledged=not killed) + _log_problems(root, template)
            assert problems == [], f"{name}, killed before disk write {kill_at} of {total}: {problems}"
        points[name] = total
    FIGURES.update(kill_points=sum(points.values()), operations=len(points), points_per_operation=points)
    print(f"\nkill-point figures: {FIGURES}")
