"""Reading a plan folder the way an auditor would: straight from the files, no server code."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

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
    cycle = find_cycle({i: t["blockedBy"] for i, t in tasks.items()})
    if cycle:
        problems.append("cycle " + " -> ".join(f"#{i}" for i in cycle))
    return problems


def tree_state(top: Path, skip: Path | None = None) -> dict[str, bytes | str]:
    """Every path under `top` (except under `skip`) with its bytes or link target."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        d = Path(dirpath)
        if skip is not None:
            dirnames[:] = [n for n in dirnames if d / n != skip]
        for n in dirnames + filenames:
            p = d / n
            key = str(p.relative_to(top))
            if p.is_symlink():
                out[key] = "-> " + os.readlink(p)
            elif p.is_file():
                out[key] = p.read_bytes()
            else:
                out[key] = "dir"
    return out


def text(result: Any) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content)
