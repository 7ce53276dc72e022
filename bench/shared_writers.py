"""K server processes creating tasks in one plan at once: is every acknowledged task
kept, and with a distinct id?"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bench.config import description
from bench.peers.peers import result_text
from bench.servers import connect, ours_params
from bench.workloads import count_task_files, seed_plan


@dataclass
class WriterResult:
    k: int
    acked: int
    on_disk: int
    unique_ids: int
    seconds: float
    errors: list[str]

    @property
    def throughput(self) -> float:
        return self.acked / self.seconds


async def shared_writers(k: int, per_writer: int, tmp: Path, log: TextIO) -> WriterResult:
    """k server processes, one client each, all creating tasks in one plan at once."""
    root = tmp / f"writers-{k}"
    seed_plan(root, 0)
    go = asyncio.Event()
    ready = 0
    acked_ids: list[int] = []
    errors: list[str] = []
    t_start = t_end = 0.0

    async def writer(w: int) -> None:
        nonlocal ready
        async with connect(ours_params(root), log) as c:
            await c.list_tools()
            ready += 1
            await go.wait()
            for i in range(per_writer):
                r = await c.call_tool("TaskCreate", {"subject": f"W{w} task {i}", "description": description(i)})
                if r.is_error:
                    errors.append(result_text(r)[:200])
                else:
                    acked_ids.append(r.structured_content["task"]["id"])

    # The clock starts once every writer is connected, so start-up is not counted.
    async def starter() -> None:
        nonlocal t_start
        while ready < k:
            await asyncio.sleep(0.01)
        t_start = time.perf_counter()
        go.set()

    tasks = [asyncio.create_task(writer(w)) for w in range(k)]
    st = asyncio.create_task(starter())
    await asyncio.gather(*tasks)
    t_end = time.perf_counter()
    await st
    return WriterResult(k, len(acked_ids), count_task_files(root), len(set(acked_ids)), t_end - t_start, errors)
