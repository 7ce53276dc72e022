"""How many synchronous flushes (fsync, fdatasync) one acknowledged write costs the file store:
a real `python -m server --root R` run under `strace -f`, driven by the SDK client; each tool
is called N times in its own server, and a server that answers no write is subtracted (its
start-up and exit).

Usage: python -m bench.durable_steps [N]   (needs strace; prints one line per tool)"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters, stdio_client

from bench.servers import CLIENT_MODE, REPO
from planning_core import Planner
from planning_core.stores.files import FileStore

FLUSHES = "fsync,fdatasync"
EDGE = ("addBlockedBy", "removeBlockedBy")  # each call changes two task files
Call = Callable[[int], tuple[str, dict[str, Any]]]


def calls(plan: str) -> dict[str, Call]:
    return {
        "none": lambda k: ("", {}),
        "TaskCreate": lambda k: ("TaskCreate", {"plan": plan, "subject": f"made {k}"}),
        "TaskUpdate": lambda k: ("TaskUpdate", {"plan": plan, "taskId": "1", "description": f"edit {k}"}),
        "TaskUpdate with an edge": lambda k: ("TaskUpdate", {"plan": plan, "taskId": "3", EDGE[k % 2]: ["1"]}),
        "TaskUpdate delete": lambda k: ("TaskUpdate", {"plan": plan, "taskId": str(10 + k), "status": "deleted"}),
    }


async def drive(root: Path, trace: Path, make: Call, n: int) -> None:
    server = [sys.executable, "-m", "server", "--root", str(root)]
    command = ["strace", "-f", "-qq", "-e", f"trace={FLUSHES}", "-o", str(trace), *server]
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(REPO))
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(sys.stderr):
        async with Client(stdio_client(params, errlog=quiet), mode=CLIENT_MODE, cache=None) as c:
            for k in range(n):
                tool, args = make(k)
                if tool:
                    result = await c.call_tool(tool, args)
                    assert not result.is_error, result


def count(trace: Path) -> int:
    return sum(1 for line in trace.read_text().splitlines() if re.search(r"\b(fsync|fdatasync)\(", line))


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        results: dict[str, int] = {}
        for name in calls(""):
            root = Path(tmp) / name.replace(" ", "-")
            planner = Planner(FileStore(root))
            made = planner.create_plan(
                "Steps", analysis="a", approach="b", tasks=[{"subject": f"t{i}"} for i in range(1, 10 + n + 1)]
            )
            trace = Path(tmp) / f"{root.name}.strace"
            anyio.run(drive, root, trace, calls(made.name)[name], n)
            results[name] = count(trace)
        base = results.pop("none")
        for name, total in results.items():
            per_write = (total - base) / n
            print(f"{name}: {per_write:.2f} flushes per acknowledged write ({total} - {base} at start/exit, {n} calls)")


if __name__ == "__main__":
    subprocess.run(["strace", "-V"], check=True, capture_output=True)
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
