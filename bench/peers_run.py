"""The peer comparison: the same workload, through the same SDK client, on the peer
task servers that bench/peers/install.sh installs (drivers in bench/peers/peers.py)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from bench.config import Config, description, subject
from bench.measure import Floor, Series, timed
from bench.peers.peers import PEERS, Peer, answer_size, tools_list_size
from bench.servers import check, connect, ours_params
from bench.shared_writers import WriterResult, shared_writers


@dataclass
class PeerResult:
    name: str
    version: str | None
    skipped: str | None = None
    startup_s: float | None = None
    tools: int | None = None
    tools_chars: int | None = None
    size: int = 0
    grow_s: float = 0.0
    create: Series = field(default_factory=Series)
    update: Series = field(default_factory=Series)
    listing: Series = field(default_factory=Series)
    list_chars: int | None = None
    list_structured: bool = False
    writers_acked: int | None = None
    writers_kept: int | None = None  # None: the data file was unreadable
    notes: list[str] = field(default_factory=list)


async def run_peer(name: str, cfg: Config, floor: Floor, tmp: Path) -> PeerResult:
    cls = PEERS[name]
    res = PeerResult(name=name, version=cls.installed_version())
    if not cls.available():
        res.skipped = "not installed (bench/peers/install.sh)"
        return res
    workdir = tmp / f"peer-{name}"
    peer: Peer = cls(workdir)
    peer.prepare()
    with open(workdir / "stderr.log", "w") as errlog:
        t0 = time.perf_counter()
        async with peer.client(errlog=errlog, cache=None) as c:
            tools = (await c.list_tools()).tools
            res.startup_s = time.perf_counter() - t0
            res.tools, res.tools_chars = len(tools), tools_list_size(tools)

            # A peer's list can't be seeded on disk, so it is grown by creates, within a time budget.
            ids: list[str] = []
            t_grow = time.perf_counter()
            tail = max(1, min(cfg.peer_calls, cfg.peer_target // 5))
            while len(ids) < cfg.peer_target and time.perf_counter() - t_grow < cfg.peer_budget:
                dt_, r = await timed(peer.create_task(c, len(ids) + 1))
                ids += peer.task_ids(r)
                res.create.ours.append(dt_)
            res.grow_s = time.perf_counter() - t_grow
            res.size = len(ids)
            if res.size < cfg.peer_target:
                res.notes.append(f"reached {res.size} of {cfg.peer_target} tasks in the {cfg.peer_budget:.0f} s budget")
            # The create figure is that of the last `tail` creates (the plan near its final size).
            res.create.ours = res.create.ours[-tail:]
            for _ in res.create.ours:
                res.create.echo.append(await floor.call())

            t_upd = time.perf_counter()
            for tid in ids[: cfg.peer_calls]:
                if time.perf_counter() - t_upd > cfg.peer_budget / 2:
                    res.notes.append(f"status updates stopped after {len(res.update.ours)} calls (time budget)")
                    break
                dt_, _ = await timed(peer.set_status(c, tid, "in_progress"))
                res.update.ours.append(dt_)
                res.update.echo.append(await floor.call())

            t_list = time.perf_counter()
            for i in range(max(10, cfg.peer_calls // 10)):
                if i and time.perf_counter() - t_list > cfg.peer_budget / 4:
                    break
                dt_, r = await timed(peer.list_tasks(c))
                res.listing.ours.append(dt_)
                res.listing.echo.append(await floor.call())
                res.list_chars = answer_size(r)
                res.list_structured = r.structured_content is not None

        await _two_writers(cls, tmp / f"peer-{name}-writers", cfg.peer_writer_tasks, errlog, res)
    return res


async def ours_filled(cfg: Config, floor: Floor, tmp: Path, log: TextIO) -> PeerResult:
    """Our side of the peer comparison, run exactly as a peer's: an empty folder filled
    through TaskCreate with the same tasks, the same timed tails, the whole list at once."""
    res = PeerResult(name="planning-mcp", version=None)
    root = tmp / "peer-ours"
    t0 = time.perf_counter()
    async with connect(ours_params(root), log) as c:
        tools = (await c.list_tools()).tools
        res.startup_s = time.perf_counter() - t0
        res.tools, res.tools_chars = len(tools), tools_list_size(tools)
        # An empty plan, as a peer's data file starts empty; it becomes the current plan.
        plan = {"title": "Benchmark plan", "analysis": "Peer comparison.", "approach": "N/A", "name": "bench"}
        check(await c.call_tool("PlanCreate", plan), "PlanCreate")
        ids: list[int] = []
        tail = max(1, min(cfg.peer_calls, cfg.peer_target // 5))
        t_grow = time.perf_counter()
        while len(ids) < cfg.peer_target:
            i = len(ids) + 1
            dt_, r = await timed(c.call_tool("TaskCreate", {"subject": subject(i), "description": description(i)}))
            ids.append(int(check(r, "TaskCreate").structured_content["task"]["id"]))
            res.create.ours.append(dt_)
        res.grow_s, res.size = time.perf_counter() - t_grow, len(ids)
        res.create.ours = res.create.ours[-tail:]
        for _ in res.create.ours:
            res.create.echo.append(await floor.call())
        for tid in ids[: cfg.peer_calls]:
            dt_, r = await timed(c.call_tool("TaskUpdate", {"taskId": tid, "status": "in_progress"}))
            check(r, "TaskUpdate")
            res.update.ours.append(dt_)
            res.update.echo.append(await floor.call())
        for _ in range(max(10, cfg.peer_calls // 10)):
            dt_, r = await timed(c.call_tool("TaskList", {"limit": 1000}))
            check(r, "TaskList")
            res.listing.ours.append(dt_)
            res.listing.echo.append(await floor.call())
            res.list_chars = answer_size(r)
            res.list_structured = r.structured_content is not None
    return res


async def _two_writers(cls: type[Peer], wdir: Path, per_writer: int, errlog: TextIO, res: PeerResult) -> None:
    """Two server processes on one data dir / project root, `per_writer` tasks each, at
    once; records what was acknowledged and what is on disk afterwards in `res`."""
    wpeer: Peer = cls(wdir)
    wpeer.prepare()
    acked: list[str] = []
    failed: dict[int, list[str]] = {0: [], 1: []}
    ready = asyncio.Event()
    started = 0

    async def writer(w: int) -> None:
        nonlocal started
        async with wpeer.client(errlog=errlog, cache=None) as wc:
            await wc.list_tools()
            started += 1
            if started == 2:
                ready.set()
            await ready.wait()
            for i in range(per_writer):
                try:
                    r = await wpeer.create_task(wc, w * 1000 + i)
                    acked.extend(wpeer.task_ids(r))
                except Exception as e:  # a refused write is simply not acknowledged
                    failed[w].append(str(e).strip().splitlines()[0][:100])

    await asyncio.gather(writer(0), writer(1))
    res.writers_acked = len(acked)
    res.writers_kept = wpeer.stored_task_count()
    for w, errs in failed.items():
        if errs:
            res.notes.append(f"2 writers: writer {w} had {len(errs)} creates not acknowledged (first: {errs[0]!r})")
    if res.writers_kept is None:
        res.notes.append("2 writers: the data file on disk was unreadable (not valid JSON) afterwards")


async def ours_two_writers(n: int, tmp: Path, log: TextIO) -> WriterResult:
    """Our side of the two-writer peer comparison: the shared-writers run with K=2."""
    return await shared_writers(2, n, tmp / "peer-compare", log)
