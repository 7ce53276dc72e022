"""Six real OS processes writing one plan at once: nothing acknowledged is lost."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from planning_core import Planner
from planning_core.stores.files import FileStore, historyread
from tests.support.files import assert_mirrored_on_disk
from tests.support.procs import child_env, wait_until
from tests.support.waits import bound

WORKERS = 6
PER_WORKER = 30
SEEDS = 3

WORKER = r"""
import json, os, sys, time
from pathlib import Path
from planning_core import Planner
from planning_core.stores.files import FileStore

root, plan, k, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5])
planner = Planner(FileStore(root, lock_timeout=60))
(go.parent / f"ready-{k}").touch()                   # up and imported: tell the parent
while not go.exists():                               # then all start at once
    time.sleep(0.005)
ids, edges, completed = [], [], []
for j in range(n):
    blocked_by = []
    if j % 5 == 0:
        blocked_by.append(1 + (j + k) % 3)          # a seed task every worker shares
    if j % 3 == 1:
        blocked_by.append(ids[-1])                   # my previous task
    t = planner.create_task(plan, f"w{k}-t{j}", f"worker {k}", blocked_by=blocked_by, owner=f"w{k}")
    ids.append(t.id)
    edges += [[b, t.id] for b in blocked_by]
    if j in (2, 12, 27):                             # never blocked by construction
        planner.update_task(plan, t.id, status="in_progress", owner=f"w{k}")
        planner.update_task(plan, t.id, status="completed", metadata={"by": k})
        completed.append(t.id)
    if j == 15:                                      # drop the shared-seed edge again
        seed = blocked_by[0]
        planner.update_task(plan, t.id, remove_blocked_by=[seed])
        edges.remove([seed, t.id])
print(json.dumps({"ids": ids, "edges": edges, "completed": completed}))
"""


def test_six_processes_one_plan(planner: Planner, file_store: FileStore, tmp_path: Path) -> None:
    snap = planner.create_plan("Race", date="2026-05-28", tasks=[{"subject": f"seed {i}"} for i in range(SEEDS)])
    name, folder = snap.name, file_store.todo / snap.name
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(file_store.root), name, str(k), str(PER_WORKER), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        for k in range(WORKERS)
    ]
    try:
        # The handshake: every worker has said it is ready, so the go starts a real race.
        wait_until(
            lambda: all((tmp_path / f"ready-{k}").exists() or procs[k].poll() is not None for k in range(WORKERS)),
            "every worker ready",
            timeout=bound(60),
        )
    finally:
        go.touch()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=bound(120))
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))

    total = SEEDS + WORKERS * PER_WORKER
    acked = [i for r in results for i in r["ids"]]
    assert len(acked) == len(set(acked)) == WORKERS * PER_WORKER
    assert sorted(acked) == list(range(SEEDS + 1, total + 1))

    # on disk, read straight from the files: nothing lost, nothing torn, no leftovers
    tasks = assert_mirrored_on_disk(folder)
    assert sorted(tasks) == list(range(1, total + 1))
    assert int((folder / ".highwatermark").read_text()) == total == max(tasks)
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith("task_")) == [
        ".highwatermark", ".lock", "history.jsonl", "plan.md",
    ]  # fmt: skip
    # ... and the history holds each acknowledged create once (after the plan's own entry)
    logged = [e for entry in historyread.read_all(str(folder), archived=False)[1:] for e in entry.events]
    created = [e.task for e in logged if e.op == "created"]
    assert sorted(i for i in created if i is not None) == sorted(acked)
    expected_blocked_by: dict[int, set[int]] = {i: set() for i in tasks}
    for k, r in enumerate(results):
        for j, i in enumerate(r["ids"]):
            assert tasks[i]["subject"] == f"w{k}-t{j}"
            assert tasks[i]["owner"] == f"w{k}"
        for b, i in r["edges"]:
            expected_blocked_by[i].add(b)
        for i in r["completed"]:
            assert tasks[i]["status"] == "completed" and tasks[i]["metadata"] == {"by": k}
    for i, t in tasks.items():
        assert set(t["blockedBy"]) == expected_blocked_by[i], f"#{i}"
    # the shared seed tasks got every worker's edge (no lost read-modify-write)
    for seed in range(1, SEEDS + 1):
        assert set(tasks[seed]["blocks"]) == {i for i, bs in expected_blocked_by.items() if seed in bs}
        assert len(tasks[seed]["blocks"]) > WORKERS

    # and a fresh store agrees with the files
    fresh = FileStore(file_store.root).snapshot(name)
    assert not fresh.corrupt and len(fresh.tasks) == total
    assert all(fresh.tasks[i].blocks == sorted(t["blocks"]) for i, t in tasks.items())
    assert FileStore(file_store.root).repair(name).rewritten == []
