"""How a peer's list time depends on what its tasks hold (two earlier runs disagreed
about the peers by 4-10x). Each peer, from empty, is filled through its own create tool
with N tasks three ways, then its whole list is timed (each call followed by an echo):

- same: the task every server gets in bench.run (subject + description, nothing else);
- earlier: the fields the earlier bench.run runs also sent (Shrimp: implementationGuide,
  verificationCriteria; Task Master: details, testStrategy);
- long: the same task with a 1,000-character description.

    python -m bench.peers_fill [--tasks N] [--calls N]      (prints a Markdown table)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.config import description, subject
from bench.measure import Floor, Series, timed
from bench.peers.peers import PEERS, Peer, _check, answer_size
from bench.servers import connect, echo_params

LONG = 1_000  # characters of the "long" description


def task_fields(kind: str, i: int) -> dict[str, str]:
    d = description(i)
    if kind == "long":
        d = (d + " ") * (LONG // (len(d) + 1)) + "x" * (LONG % (len(d) + 1))
    return {"subject": subject(i), "description": d}


async def create(peer: Peer, c: Any, kind: str, i: int) -> None:
    f = task_fields(kind, i)
    if peer.name == "shrimp":
        task = {"name": f["subject"], "description": f["description"], "implementationGuide": ""}
        if kind == "earlier":
            task |= {
                "implementationGuide": f"Implement item {i}, then add a test for it.",
                "verificationCriteria": f"Test for item {i} passes.",
            }
        _check(await c.call_tool("split_tasks", {"updateMode": "append", "tasksRaw": json.dumps([task])}), "split")
    else:
        args: dict[str, str] = {"title": f["subject"], "description": f["description"]}
        if kind == "earlier":
            args |= {
                "details": f"Implement item {i}, then add a test for it.",
                "testStrategy": f"Test for item {i} passes.",
            }
        _check(await c.call_tool("add_task", {"projectRoot": str(peer.project_root), **args}), "add_task")  # type: ignore[attr-defined]


async def one(name: str, kind: str, tasks: int, calls: int, floor: Floor, tmp: Path) -> tuple[Series, int, float]:
    peer = PEERS[name](tmp / f"{name}-{kind}")
    peer.prepare()
    with open(tmp / f"{name}-{kind}.log", "w") as errlog:
        async with peer.client(errlog=errlog, cache=None) as c:
            await c.list_tools()
            t0 = time.perf_counter()
            for i in range(1, tasks + 1):
                await create(peer, c, kind, i)
            fill = time.perf_counter() - t0
            s, chars = Series(), 0
            for _ in range(calls):
                dt, r = await timed(peer.list_tasks(c))
                s.ours.append(dt)
                s.echo.append(await floor.call())
                chars = answer_size(r)
    return s, chars, fill


async def main_async(tasks: int, calls: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="peers-fill-"))
    with open(tmp / "echo.log", "w") as log:
        async with connect(echo_params("peers-fill"), log) as e:
            floor = Floor(e)
            await floor.warm_up()
            print(f"| peer | tasks ({tasks:,}) hold | list median ms (× echo) | answer chars | fill s |")
            print("|---|---|---|---|---|")
            for name in PEERS:
                for kind in ("same", "earlier", "long"):
                    s, chars, fill = await one(name, kind, tasks, calls, floor, tmp)
                    print(
                        f"| {name} | {kind} | {s.med * 1e3:.2f} ({s.ratio:.2f}) | {chars:,} | {fill:.0f} |", flush=True
                    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=1_000)
    ap.add_argument("--calls", type=int, default=10)
    a = ap.parse_args()
    asyncio.run(main_async(a.tasks, a.calls))


if __name__ == "__main__":
    main()
