"""Promise: N server processes writing one plan at once lose nothing.

Each worker is a real `python -m server --root R` over stdio, driven by its own SDK
client; all run concurrently. Afterwards the files are read directly."""

from __future__ import annotations

import os
import random
import re
import time
from pathlib import Path

import anyio
from mcp import Client

from bench.audit import graph_problems, read_tasks
from tests.support.mcp import server_params, text_of
from tests.support.seed import make_plan
from tests.support.waits import bound

PROCS = int(os.environ.get("RELIABILITY_PROCS", "8"))
OPS = int(os.environ.get("RELIABILITY_OPS", "100"))
CLAIM_TARGETS = 4
CREATED = re.compile(r"Task #(\d+) created successfully")
FIGURES: dict[str, object] = {}


async def worker(w: int, root: Path, plan: str, pool: list[int], log: dict[str, list], rng: random.Random) -> None:
    params = server_params(root)
    mine: dict[int, str] = {}  # task id -> last acknowledged subject
    claims_at = set(range(OPS // 2, OPS // 2 + CLAIM_TARGETS))
    targets = list(range(1, CLAIM_TARGETS + 1))
    async with Client(params) as c:
        for op in range(OPS):
            if op in claims_at:
                target = targets[(op - OPS // 2 + w) % CLAIM_TARGETS]
                r = await c.call_tool(
                    "TaskUpdate", {"taskId": target, "status": "in_progress", "owner": f"w{w}", "plan": plan}
                )
                log["claims"].append((target, w, not r.is_error, text_of(r)))
                continue
            kind = rng.choices(["create", "update", "link"], weights=[5, 2, 3])[0] if mine else "create"
            if kind == "create":
                args: dict[str, object] = {"subject": f"w{w}-op{op}", "description": "d", "plan": plan}
                if pool and rng.random() < 0.4:
                    args["blockedBy"] = [rng.choice(pool)]
                r = await c.call_tool("TaskCreate", args)
                if not r.is_error:
                    m = CREATED.search(text_of(r))
                    assert m, text_of(r)
                    tid = int(m.group(1))
                    mine[tid] = args["subject"]  # type: ignore[assignment]
                    pool.append(tid)
                    log["created"].append((tid, w))
                    for b in args.get("blockedBy", []):  # type: ignore[attr-defined]
                        log["edges"].append((tid, b))
                else:
                    log["create_errors"].append(text_of(r))
            elif kind == "update":
                tid = rng.choice(list(mine))
                subject = f"w{w}-op{op}-renamed"
                r = await c.call_tool("TaskUpdate", {"taskId": tid, "subject": subject, "plan": plan})
                assert not r.is_error, text_of(r)
                mine[tid] = subject
            else:
                a = rng.choice(list(mine))
                b = rng.choice(pool)
                r = await c.call_tool("TaskUpdate", {"taskId": f"#{a}", "addBlockedBy": [str(b)], "plan": plan})
                t = text_of(r)
                if not r.is_error:
                    log["edges"].append((a, b))
                elif "cycle" in t:
                    log["cycles"].append(t)
                elif "itself" in t:
                    log["self"].append(t)
                else:
                    raise AssertionError(f"unexpected refusal: {t}")
    log["subjects"].append(mine)


async def test_processes_writing_one_plan_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    targets = [{"subject": f"claim me {i}", "description": ""} for i in range(1, CLAIM_TARGETS + 1)]
    plan = make_plan(root, "concurrency", targets).name
    pool: list[int] = []  # ids any worker may link to (claim targets excluded)
    log: dict[str, list] = {
        k: [] for k in ("created", "edges", "cycles", "self", "claims", "subjects", "create_errors")
    }
    started = time.monotonic()
    with anyio.fail_after(bound(300)):
        async with anyio.create_task_group() as tg:
            for w in range(PROCS):
                tg.start_soon(worker, w, root, plan, pool, log, random.Random(1000 + w))
    elapsed = time.monotonic() - started

    folder = root / "todo" / plan
    tasks, bad = read_tasks(folder)
    assert bad == []
    assert log["create_errors"] == []
    created = [tid for tid, _ in log["created"]]
    assert len(created) == len(set(created)), "an id was handed to two creates"
    missing = sorted(set(created) - set(tasks))
    assert missing == [], f"acknowledged creates not on disk: {missing}"
    assert set(tasks) == set(created) | set(range(1, CLAIM_TARGETS + 1))
    for tid, b in log["edges"]:
        assert b in tasks[tid]["blockedBy"], f"acknowledged edge #{tid} <- #{b} lost"
    assert graph_problems(tasks) == []  # mirror images, no cycle, no dangling edge
    for mine in log["subjects"]:
        for tid, subject in mine.items():
            assert tasks[tid]["subject"] == subject, f"#{tid}: acknowledged update lost"
    for target in range(1, CLAIM_TARGETS + 1):
        wins = [w for t, w, ok, _ in log["claims"] if t == target and ok]
        assert len(wins) == 1, (target, log["claims"])
        assert tasks[target]["status"] == "in_progress" and tasks[target]["owner"] == f"w{wins[0]}"
        losers = [msg for t, _, ok, msg in log["claims"] if t == target and not ok]
        assert all("already in progress" in m for m in losers), losers
    assert int((folder / ".highwatermark").read_text()) >= max(tasks)
    FIGURES.update(
        procs=PROCS,
        ops=OPS,
        seconds=round(elapsed, 1),
        tasks_created=len(created),
        edges=len(log["edges"]),
        cycle_refusals=len(log["cycles"]),
        self_refusals=len(log["self"]),
        claims=len(log["claims"]),
    )
    print(f"\nconcurrency figures: {FIGURES}")
