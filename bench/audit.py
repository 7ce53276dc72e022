"""Reading a plan folder the way an auditor would: straight from the files, no server code.

Shared by bench/soak.py, bench/crashkit.py and the tests that audit what a server or a
kill left on disk (the tests import it from here)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from planning_core.fileio.atomic import is_temp

TASK_FILE = re.compile(r"task_([1-9]\d*)\.json")
STATUSES = {"pending", "in_progress", "completed"}


def read_tasks(folder: Path) -> tuple[dict[int, dict[str, Any]], list[str]]:
    """Every task file that parses (by id) and the names of those that do not."""
    tasks: dict[int, dict[str, Any]] = {}
    bad: list[str] = []
    for name in sorted(os.listdir(folder)):
        m = TASK_FILE.fullmatch(name)
        if not m:
            continue
        path = folder / name
        if path.is_symlink():
            bad.append(name)
            continue
        try:
            data = json.loads(path.read_bytes())
            assert isinstance(data, dict) and data["id"] == int(m.group(1)), name
            assert data["status"] in STATUSES, name
        except (ValueError, KeyError, AssertionError):
            bad.append(name)
            continue
        tasks[data["id"]] = data
    return tasks, bad


def find_cycle(edges: dict[int, list[int]]) -> list[int] | None:
    """A cycle in `id -> blockedBy` edges, or None."""
    white, grey, black = 0, 1, 2
    color = dict.fromkeys(edges, white)
    stack: list[int] = []

    def visit(n: int) -> list[int] | None:
        color[n] = grey
        stack.append(n)
        for m in edges.get(n, []):
            if m not in color:
                continue
            if color[m] == grey:
                return [*stack[stack.index(m) :], m]
            if color[m] == white and (c := visit(m)):
                return c
        stack.pop()
        color[n] = black
        return None

    for n in list(edges):
        if color[n] == white and (c := visit(n)):
            return c
    return None


def graph_problems(tasks: dict[int, dict[str, Any]], *, mirror: bool = True) -> list[str]:
    """Broken invariants: dangling blockedBy, blocks not mirroring blockedBy, cycles."""
    problems = []
    for i, t in tasks.items():
        for b in t["blockedBy"]:
            if b not in tasks:
                problems.append(f"#{i} blockedBy missing #{b}")
            elif mirror and i not in tasks[b]["blocks"]:
                problems.append(f"#{i} blockedBy #{b} but #{b}.blocks = {tasks[b]['blocks']}")
        if mirror:
            for c in t["blocks"]:
                if c not in tasks or i not in tasks[c]["blockedBy"]:
                    problems.append(f"#{i} blocks #{c} but #{c} is not blocked by #{i}")
        if len(set(t["blockedBy"])) != len(t["blockedBy"]):
            problems.append(f"#{i} duplicate blockedBy {t['blockedBy']}")
        if mirror and len(set(t["blocks"])) != len(t["blocks"]):
            problems.append(f"#{i} duplicate blocks {t['blocks']}")
    cycle = find_cycle({i: t["blockedBy"] for i, t in tasks.items()})
    if cycle:
        problems.append("cycle " + " -> ".join(f"#{i}" for i in cycle))
    return problems


def dangling(folder: Path) -> list[str]:
    """Links (either list) to an id that has no task file. Read straight from the files."""
    tasks, _ = read_tasks(folder)
    return [
        f"#{i} {key} #{j}, which has no file"
        for i, t in tasks.items()
        for key in ("blockedBy", "blocks")
        for j in t[key]
        if not (folder / f"task_{j}.json").exists()
    ]


def temp_files(folder: Path) -> list[str]:
    """The writers' temp files left in a plan folder (a kill between write and rename)."""
    return [n for n in os.listdir(folder) if is_temp(n)]
