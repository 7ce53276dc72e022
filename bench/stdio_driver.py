"""Drive one `python -m server --root R` over stdio, creating and linking tasks as fast as
possible; print the server's pid, then each acknowledged id (line-buffered).

Usage: python bench/stdio_driver.py ROOT PLAN SEED (bench/crashkit.py's server_round runs it)"""

from __future__ import annotations

import os
import random
import re
import sys
from pathlib import Path

import anyio
from mcp import Client

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a script: bench/ itself is sys.path[0]

from bench.servers import ours_params  # noqa: E402


def children() -> list[int]:
    pids = []
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/children") as f:
            pids += [int(p) for p in f.read().split()]
    return pids


async def main(root: str, plan: str, seed: int) -> None:
    rng = random.Random(seed)
    params = ours_params(Path(root))
    known: list[int] = []
    async with Client(params) as c:
        print("server", *children(), flush=True)
        while True:
            args: dict[str, object] = {"subject": "via server", "description": "x" * rng.randrange(2000), "plan": plan}
            if known and rng.random() < 0.5:
                args["blockedBy"] = [rng.choice(known)]
            r = await c.call_tool("TaskCreate", args)
            m = re.search(r"Task #(\d+) created", r.content[0].text)  # type: ignore[union-attr]
            if m:
                known.append(int(m.group(1)))
                print("id", m.group(1), *args.get("blockedBy", []), flush=True)  # type: ignore[misc]


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]))
