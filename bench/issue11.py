"""The figures of issue 11 that bench/run.py does not take, in a short run:

    python -m bench.issue11 [--calls N] [--idle SECONDS]

TaskList default page at 10,000 tasks, TaskList limit 1,000 at 1,000 tasks, PlanList
(10 plans of 1,000 tasks), TaskUpdate and TaskCreate, each × echo (every call followed
by one echo call, as in bench/run.py); the time from a write by another process to the
resources/updated notice at a subscribed client (median); the idle CPU of a server with
20 plans. Prints one table."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from mcp.types import ResourceUpdatedNotification

from bench.measure import Floor, Series, timed
from bench.servers import CLIENT_MODE, REPO, check, connect, echo_params, find_pid, ours_params
from bench.workloads import PLAN, seed_plan

from mcp import Client, stdio_client  # isort: skip

WRITER = """
import sys
from planning_core import FileStore, Planner
import time
Planner(FileStore(sys.argv[1])).update_task(sys.argv[2], int(sys.argv[3]), subject=sys.argv[4])
print(time.time(), flush=True)  # the write is durable here: the figure starts now
"""


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


async def main_async(calls: int, idle: float) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="h13-"))
    log = open(tmp / "stderr.log", "w")  # noqa: SIM115
    rows: list[tuple[str, str]] = []
    async with connect(echo_params("issue11"), log) as e:
        floor = Floor(e)
        for _ in range(20):
            await floor.call()
        big = tmp / "big"
        seed_plan(big, 10_000)
        async with connect(ours_params(big), log) as c:
            await series(c, floor, "TaskList", {}, 3)
            s = await series(c, floor, "TaskList", {}, calls)
            rows.append(("TaskList default page, 10,000 tasks", f"{s.med * 1e3:.2f} ms, {s.ratio:.2f}× echo"))
        mid = tmp / "mid"
        seed_many(mid, 10, 1_000)
        async with connect(ours_params(mid), log) as c:
            await series(c, floor, "TaskList", {"plan": PLAN, "limit": 1000}, 3)
            s = await series(c, floor, "TaskList", {"plan": PLAN, "limit": 1000}, calls)
            rows.append(("TaskList limit 1,000, 1,000 tasks", f"{s.med * 1e3:.2f} ms, {s.ratio:.2f}× echo"))
            await series(c, floor, "PlanList", {}, 3)
            s = await series(c, floor, "PlanList", {}, calls)
            rows.append(("PlanList, 10 plans of 1,000 tasks", f"{s.med * 1e3:.2f} ms, {s.ratio:.2f}× echo"))
            s = await series(c, floor, "TaskUpdate", lambda i: {"plan": PLAN, "taskId": 5, "subject": f"s{i}"}, calls)
            rows.append(("TaskUpdate subject", f"{s.med * 1e3:.2f} ms, {s.ratio:.2f}× echo"))
            s = await series(c, floor, "TaskUpdate", lambda i: {"plan": PLAN, "taskId": 7 + i % 2,
                                                                 "status": "in_progress" if i % 4 < 2 else "pending"},
                             calls)
            rows.append(("TaskUpdate status", f"{s.med * 1e3:.2f} ms, {s.ratio:.2f}× echo"))
            s = await series(c, floor, "TaskCreate", lambda i: {"plan": PLAN, "subject": f"n{i}", "description": "d"},
                             calls)
            rows.append(("TaskCreate", f"{s.med * 1e3:.2f} ms, {s.ratio:.2f}× echo"))
        rows.append(("change → resources/updated (median)", await notice_latency(tmp, log, max(5, calls // 4))))
        rows.append((f"idle CPU, 20 plans, {idle:.0f} s", await idle_cpu(tmp, log, idle)))
    for k, v in rows:
        print(f"| {k} | {v} |")


async def notice_latency(tmp: Path, log: Any, reps: int) -> str:
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
                sys.executable, "-c", WRITER, str(root), names[1], "3", f"by hand {i}", cwd=str(REPO),
                stdout=asyncio.subprocess.PIPE,
            )
            out, _ = await proc.communicate()
            t = float(out.decode().split()[-1])
            try:
                got = await asyncio.wait_for(heard.get(), 2.0)
                lat.append(max(0.0, got - t))
            except TimeoutError:
                lat.append(2.0)
            await asyncio.sleep(0.3)
    return f"{statistics.median(lat) * 1e3:.0f} ms (max {max(lat) * 1e3:.0f} ms, {reps} writes)"


async def idle_cpu(tmp: Path, log: Any, seconds: float) -> str:
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
    import os

    hz = os.sysconf("SC_CLK_TCK")
    return f"{(b - a) / hz / seconds * 100:.2f}% of one core"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--idle", type=float, default=10.0)
    a = ap.parse_args()
    asyncio.run(main_async(a.calls, a.idle))


if __name__ == "__main__":
    main()
