"""Disk inspection helpers for the core tests."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from planning_core import Planner

SEED_FIELDS = [
    "id", "subject", "description", "status", "blockedBy", "blocks",
    "owner", "activeForm", "metadata", "createdAt", "updatedAt",
]  # fmt: skip

PLAN = "2026-05-28-add-auth"
SUBJECTS = ["Design auth schema", "Implement JWT middleware", "Add login endpoint", "Add logout endpoint"]


def tree_state(root: Path) -> dict[str, str]:
    """Every entry under root: a hash of each file's bytes, symlink targets, folders."""
    state: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        for d in dirnames:
            p = base / d
            rel = str(p.relative_to(root))
            state[rel] = f"link:{os.readlink(p)}" if p.is_symlink() else "dir"
        for f in filenames:
            p = base / f
            rel = str(p.relative_to(root))
            if p.is_symlink():
                state[rel] = f"link:{os.readlink(p)}"
            else:
                state[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return state


def read_task_file(folder: Path, task_id: int) -> dict[str, Any]:
    return json.loads((folder / f"task_{task_id}.json").read_text())


def disk_tasks(folder: Path) -> dict[int, dict[str, Any]]:
    out = {}
    for p in folder.glob("task_*.json"):
        data = json.loads(p.read_text())
        assert p.name == f"task_{data['id']}.json"
        out[data["id"]] = data
    return out


def assert_mirrored_on_disk(folder: Path) -> dict[int, dict[str, Any]]:
    tasks = disk_tasks(folder)
    for i, t in tasks.items():
        for b in t["blockedBy"]:
            assert i in tasks[b]["blocks"], f"#{b}.blocks lacks {i}"
        for c in t["blocks"]:
            assert i in tasks[c]["blockedBy"], f"#{c}.blockedBy lacks {i}"
        assert len(set(t["blocks"])) == len(t["blocks"])
        assert len(set(t["blockedBy"])) == len(t["blockedBy"])
    return tasks


def build_contract_plan(planner: Planner) -> str:
    """The contract's example: 2026-05-28-add-auth, diamond 1->2, 1->3, 2,3->4;
    #1 and #2 completed, #3 in progress under alice, #4 pending."""
    snap = planner.create_plan(
        "Add auth",
        analysis="Users need to log in.",
        approach="JWT with a middleware.",
        date="2026-05-28",
        tasks=[
            {"subject": SUBJECTS[0], "description": "tables", "activeForm": "Designing auth schema"},
            {"subject": SUBJECTS[1], "description": "mw", "blockedBy": [1]},
            {"subject": SUBJECTS[2], "description": "login", "blockedBy": [1]},
            {"subject": SUBJECTS[3], "description": "logout", "blockedBy": [2, 3]},
        ],
    )
    name = snap.name
    assert name == PLAN
    planner.update_task(name, 1, status="completed")
    planner.update_task(name, 2, status="completed")
    planner.update_task(name, 3, status="in_progress", owner="alice")
    return name
