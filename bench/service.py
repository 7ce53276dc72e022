"""The service figures that the per-size runs of bench/run.py do not give: PlanList
over 10 plans of 1,000 tasks (× echo), the time from a durable write by another
process to the resources/updated notice at a subscribed client, and the idle CPU of a
server with 20 plans. `python -m bench.run` takes them (`run_service`) into the
report's issue-11 table; alone, for a quick look:

    python -m bench.service [--calls N] [--idle SECONDS] [--writes N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.types import ResourceUpdatedNotification

from bench.measure import Floor, Series, median, timed
from bench.servers import CLIENT_MODE, REPO, check, connect, echo_params, find_pid, ours_params
from bench.workloads import PLAN, seed_plan

from mcp import Client, stdio_client  # isort: skip

WRITER = """
import sys
from planning_core import Planner
from planning_core.stores.files import FileStore
import time
Planner(FileStore(sys.argv[1])).update_task(sys.argv[2], int(sys.argv[3]), subject=sys.argv[4])
print(time.time(), flush=True)  # the write is durable here: the figure starts now
"""
NOTICE_TIMEOUT = 2.0  # seconds a write waits for its notice


def seed_many(root: Path, plans: int, n: int) -> list[str]:
    seed_plan(root, n)
    names = [PLAN]
    for k in range(1, plans):
        src = root / "todo" / PLAN
        name = f"2026-01-0{1 + k // 10}-bench{k}"
        subprocess.run(["cp", "-r", str(src), str(root / "todo" / name)], check=True)
        names.append(name)
    return names


async def series(c: Client, floor: Floor, tool: str, args: Any, calls: int) -> Series:
    s = Series()
    for i in range(calls):
        dt, r = await timed(c.call_tool(tool, args(i) if callable(args) else args))
        check(r, tool)
        s.ours.append(dt)
        s.echo.append(await floor.call())
    return s


@dataclass
class ServiceResult:
    planlist_10: Series = field(default_factory=Series)  # PlanList, 10 plans of 1,000 tasks
    notice: list[float] = field(default_factory=list)  # seconds, write → resources/updated
    idle_core: float = float("nan")  # fraction of one core
    idle_seconds: float = 0.0

    @property
    def notice_med(self) -> float:
        return median(self.notice)


async def run_service(calls: int, idle: float, writes: int, floor: Floor, tmp: Path, log: Any) -> ServiceResult:
    res = ServiceResult(idle_seconds=idle)
    mid = tmp / "service-plans"
    seed_many(mid, 10, 1_000)
    async with connect(ours_params(mid), log) as c:
        await series(c, floor, "PlanList", {}, 3)  # warm-up: the first call reads every plan
        res.planlist_10 = await series(c, floor, "PlanList", {}, calls)
    res.notice = await notice_latency(tmp, log, writes)
    res.idle_core = await idle_cpu(tmp, log, idle)
    return res


async def main_async(calls: int, idle: float, writes: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-service-"))
    with open(tmp / "stderr.log", "w") as log:
        async with connect(echo_params("service"), log) as e:
            floor = Floor(e)
            await floor.warm_up()
            r = await run_service(calls, idle, writes, floor, tmp, log)
    s = r.planlist_10
    print(f"| PlanList, 10 plans of 1,000 tasks | {s.med * 1e3:.2f} ms, {s.ratio:.2f}× echo |")
    print(f"| change → resources/updated (median) | {r.notice_med * 1e3:.0f} ms (max {max(r.notice) * 1e3:.0f} ms) |")
    print(f"| idle CPU, 20 plans, {idle:.0f} s | {r.idle_core * 100:.2f}% of one core |")


async def notice_latency(tmp: Path, log: Any, reps: int) -> list[float]:
    """Seconds from a write by another process (durable when it prints) to the notice."""
    root = tmp / "notice"
    names = seed_many(root, 2, 10)
    heard: asyncio.Queue[float] = asyncio.Queue()

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification) and str(message.params.uri) == f"plans://{names[1]}":
            heard.put_nowait(time.time())

    params = ours_params(root)
    lat = []
    async with Client(stdio_client(params, errlog=log), mode=CLIENT_MODE, cache=None, message_handler=on_message) as c:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await c.subscribe_resource(f"plans://{names[1]}")
        await asyncio.sleep(0.5)
        for i in range(reps):
            while not heard.empty():
                heard.get_nowait()
            # The writer's own start-up is not part of the figure: it prints when its write returned.
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                WRITER,
                str(root),
                names[1],
                "3",
                f"by hand {i}",
                cwd=str(REPO),
                stdout=asyncio.subprocess.PIPE,
            )
            out, _ = await proc.communicate()
            t = float(out.decode().split()[-1])
            try:
                got = await asyncio.wait_for(heard.get(), NOTICE_TIMEOUT)
                lat.append(max(0.0, got - t))
            except TimeoutError:
                lat.append(NOTICE_TIMEOUT)  # counted as the timeout: a lost notice must not vanish
            await asyncio.sleep(0.3)  # writes apart, so each notice is that of one write
    return lat


async def idle_cpu(tmp: Path, log: Any, seconds: float) -> float:
    """The fraction of one core a connected server with 20 plans uses doing nothing."""
    root = tmp / "idle"
    seed_many(root, 20, 10)
    async with connect(ours_params(root), log) as c:
        await c.list_tools()
        pid = find_pid(str(root))
        assert pid is not None
        await asyncio.sleep(1.0)

        def ticks() -> int:
            f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            return int(f[11]) + int(f[12])

        a = ticks()
        await asyncio.sleep(seconds)
        b = ticks()
    return (b - a) / os.sysconf("SC_CLK_TCK") / seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--idle", type=float, default=10.0)
    ap.add_argument("--writes", type=int, default=8)
    a = ap.parse_args()
    asyncio.run(main_async(a.calls, a.idle, a.writes))


if __name__ == "__main__":
    main()
