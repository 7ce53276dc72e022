"""The team benchmark's agents: K real MCP sessions (each its own planning-mcp stdio
server process and owner name), asyncio tasks of this one client process, working one
plan until it is done, while a killer `kill -9`s a random working agent's server every
few seconds and starts a new agent (a new server, a new owner) in its place.

Two ways of getting the next task, side by side:
- new: `TaskUpdate taskId="next" status=in_progress owner leaseSeconds` (one call);
- old: `TaskList status=ready`, claim the first by id; on a refusal, list again.

Everything an agent does is logged with client-side times (time.monotonic, one clock for
the machine) for bench/team_check.py to judge."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from bench.peers.peers import answer_size, result_text, wire
from bench.servers import connect, find_pid, processes

WAYS = ("new", "old")
MARKER = "planning_bench_agent"  # a `python -X` option naming an agent's server process (CPython ignores it)
NEXT = "next"
# The new way's claim waits for work (TaskUpdate waitSeconds) instead of asking again: woken
# by the store's change feed the moment a task becomes ready or a lease runs out.
CLAIM_WAIT_SECONDS = 20
NOTHING_READY_WORDS = ("nothing", "no task", "no ready")  # how an empty claim answer is told from a refusal


class AgentGone(RuntimeError):
    """An agent's server gave no answer (it died): the agent ends and another takes its place."""


@dataclass
class Call:
    owner: str
    tool: str
    t0: float
    t1: float
    written: int  # characters of the arguments as sent (wire JSON, the tool's name included)
    read: int  # characters of the answer a model reads (answer_size: text + structured)
    outcome: str  # ok | refused | empty | broken (no answer: the server died)
    task: int | None = None  # the task id the call names (None: a list, or "next")


@dataclass
class Claim:
    owner: str
    task: int
    t0: float
    t1: float
    lease_end: float  # monotonic time the lease runs out at the latest (whole seconds, as the server rounds)
    renewed: float | None = None  # when the last renewal the server acknowledged was sent (a heartbeat)

    @property
    def lease_from(self) -> float:
        """The lease surely runs `lease` seconds from this: the claim, or its last renewal, as sent."""
        return self.t0 if self.renewed is None else self.renewed


@dataclass
class Done:
    owner: str
    task: int
    work_start: float
    t0: float  # the completion sent
    t1: float  # and acknowledged


@dataclass
class Kill:
    t: float
    slot: int
    owner: str
    task: int | None  # the task it was working on


@dataclass
class Life:
    """One agent incarnation: when it could work (connected) until it died or the run ended."""

    owner: str
    start: float
    end: float = 0.0


@dataclass
class Log:
    calls: list[Call] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    dones: list[Done] = field(default_factory=list)
    kills: list[Kill] = field(default_factory=list)
    lives: list[Life] = field(default_factory=list)


@dataclass
class TeamSetup:
    way: str
    k: int
    plan: str
    durations: dict[int, float]
    lease: int
    server: Callable[[int, str], StdioServerParameters]  # (slot, marker) -> the agent's server command
    kill_every: float  # seconds between kills (0: none)
    seed: int
    errlog: TextIO
    run_tag: str
    heartbeat: float = 0.0  # seconds between lease renewals while an agent works (0: none)

    @property
    def mean(self) -> float:
        return sum(self.durations.values()) / len(self.durations)


def lease_end_after(t_mono: float, lease: int) -> float:
    """When a lease taken at monotonic t_mono runs out at the latest: the server rounds the
    expiry up to the whole second of its UTC clock."""
    wall = time.time() - (time.monotonic() - t_mono)
    return t_mono + (int(wall + lease) + 1 - wall)


class Team:
    def __init__(self, setup: TeamSetup) -> None:
        self.s = setup
        self.log = Log()
        self.done = asyncio.Event()
        self.go = asyncio.Event()
        self.completed: set[int] = set()
        self.holding: dict[int, int] = {}  # slot -> task being worked on
        self.agents: dict[int, asyncio.Task[None]] = {}
        self.owner: dict[int, str] = {}
        self.connected = 0
        self.t_go = 0.0
        self.t_stop = 0.0  # when the run stopped: the plan done, or its time up
        self.killing: set[int] = set()  # slots being killed and replaced now
        self.incarnations = dict.fromkeys(range(setup.k), 0)
        self.crashes: list[str] = []  # agents that ended unasked (their server died under a call)

    def marker(self, slot: int, owner: str) -> str:
        return f"{MARKER}={self.s.run_tag}-{owner}"

    def spawn(self, slot: int, incarnation: int) -> None:
        owner = f"agent{slot}.{incarnation}"
        self.owner[slot] = owner
        self.agents[slot] = asyncio.create_task(self.agent(slot, owner))

    async def call(self, c: Client, owner: str, tool: str, args: dict[str, Any]) -> CallToolResult:
        t0 = time.monotonic()
        written = len(wire({"name": tool, "arguments": args}))
        tid = args.get("taskId")
        task = tid if isinstance(tid, int) else None
        try:
            r = await c.call_tool(tool, args)
        except Exception as e:  # the server died under the call: no answer; this agent is gone
            self.log.calls.append(Call(owner, tool, t0, time.monotonic(), written, 0, "broken", task))
            raise AgentGone(f"{owner}'s server gave no answer to {tool}: {e!r}") from e
        outcome = "ok"
        if r.is_error:
            text = result_text(r).lower()
            outcome = "empty" if any(w in text for w in NOTHING_READY_WORDS) else "refused"
        elif tool == "TaskList" and not (r.structured_content or {}).get("tasks"):
            outcome = "empty"
        self.log.calls.append(Call(owner, tool, t0, time.monotonic(), written, answer_size(r), outcome, task))
        return r

    async def claim_new(self, c: Client, owner: str) -> int | None:
        args: dict[str, Any] = {"plan": self.s.plan, "taskId": NEXT, "status": "in_progress", "owner": owner}
        args["leaseSeconds"] = self.s.lease
        args["waitSeconds"] = CLAIM_WAIT_SECONDS
        t0 = time.monotonic()
        r = await self.call(c, owner, "TaskUpdate", args)
        if r.is_error:
            return None
        return self._claimed(owner, int((r.structured_content or {})["taskId"]), t0)

    async def claim_old(self, c: Client, owner: str) -> int | None:
        while not self.done.is_set():
            r = await self.call(c, owner, "TaskList", {"plan": self.s.plan, "status": "ready"})
            rows = [] if r.is_error else (r.structured_content or {}).get("tasks") or []
            if not rows:
                return None
            tid = int(rows[0]["id"])
            args: dict[str, Any] = {"plan": self.s.plan, "taskId": tid, "status": "in_progress", "owner": owner}
            args["leaseSeconds"] = self.s.lease
            t0 = time.monotonic()
            got = await self.call(c, owner, "TaskUpdate", args)
            if not got.is_error:
                return self._claimed(owner, tid, t0)
        return None  # refused: another agent was first; list again

    async def renew(self, c: Client, owner: str, tid: int) -> None:
        """Every heartbeat while the agent works on `tid`, an update naming the owner (a
        heartbeat: it renews the lease), until a renewal is refused (taken over) or the work ends."""
        claim = max((k for k in self.log.claims if k.owner == owner and k.task == tid), key=lambda k: k.t1)
        while True:
            await asyncio.sleep(self.s.heartbeat)
            t0 = time.monotonic()
            r = await self.call(c, owner, "TaskUpdate", {"plan": self.s.plan, "taskId": tid, "owner": owner})
            if r.is_error:
                return
            claim.renewed = t0
            claim.lease_end = lease_end_after(t0, self.s.lease)

    async def work_on(self, c: Client, owner: str, tid: int) -> None:
        """The task's duration of work, the lease renewed meanwhile (as an agent's hook would)."""
        beat = asyncio.create_task(self.renew(c, owner, tid)) if self.s.heartbeat > 0 else None
        try:
            await asyncio.sleep(self.s.durations[tid])
        finally:
            if beat is not None:
                beat.cancel()
                with contextlib.suppress(BaseException):
                    await beat

    def _claimed(self, owner: str, tid: int, t0: float) -> int:
        t1 = time.monotonic()
        self.log.claims.append(Claim(owner, tid, t0, t1, lease_end_after(t0, self.s.lease)))
        return tid

    async def agent(self, slot: int, owner: str) -> None:
        params = self.s.server(slot, self.marker(slot, owner))
        async with connect(params, self.s.errlog) as c:
            life = Life(owner, 0.0)
            self.log.lives.append(life)
            self.connected += 1
            await self.go.wait()
            life.start = time.monotonic()
            try:
                await self.work(c, slot, owner)
            finally:
                life.end = time.monotonic()

    async def work(self, c: Client, slot: int, owner: str) -> None:
        claim = self.claim_new if self.s.way == "new" else self.claim_old
        misses = 0
        while not self.done.is_set():
            tid = await claim(c, owner)
            if tid is None:
                # Nothing ready: wait a little longer each time.
                misses += 1
                await self.pause(min(2.0, 0.25 * 2 ** min(misses, 3)) * self.s.mean)
                continue
            misses = 0
            # Only while it works is an agent killed: its task is then surely not completed.
            self.holding[slot] = tid
            start = time.monotonic()
            await self.work_on(c, owner, tid)
            self.holding.pop(slot, None)
            t0 = time.monotonic()
            r = await self.call(c, owner, "TaskUpdate", {"plan": self.s.plan, "taskId": tid, "status": "completed"})
            if not r.is_error:
                self.log.dones.append(Done(owner, tid, start, t0, time.monotonic()))
                self.completed.add(tid)
                if len(self.completed) == len(self.s.durations):
                    self.done.set()

    async def pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.done.wait(), seconds)

    async def kill(self, slot: int) -> None:
        self.killing.add(slot)
        owner = self.owner[slot]
        task = self.holding.pop(slot, None)
        pid = find_pid(self.marker(slot, owner))
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.log.kills.append(Kill(time.monotonic(), slot, owner, task))
        agent = self.agents[slot]
        agent.cancel()
        with contextlib.suppress(BaseException):
            await agent
        self.incarnations[slot] += 1
        self.spawn(slot, self.incarnations[slot])
        self.killing.discard(slot)

    async def supervise(self, until: float) -> None:
        """Wait for the plan to be done (or `until`); an agent that ended by itself (its server
        died unasked) is replaced by a new one, as a killed one is, and counted."""
        while not self.done.is_set() and time.monotonic() < until:
            await self.pause(0.1)
            for slot, agent in list(self.agents.items()):
                if agent.done() and not self.done.is_set() and slot not in self.killing:
                    self.crashes.append(repr(agent.exception()) if not agent.cancelled() else "cancelled")
                    self.incarnations[slot] += 1
                    self.spawn(slot, self.incarnations[slot])

    async def killer(self) -> None:
        if self.s.kill_every <= 0:
            return
        rng = random.Random(self.s.seed)
        while not self.done.is_set():
            await self.pause(self.s.kill_every * rng.uniform(0.7, 1.3))
            # A kill falls on a working agent (when none works at its time, it waits for one), and
            # never twice on one task: a long task killed each time it is taken would never be done.
            working: list[int] = []
            while not working and not self.done.is_set():
                killed = {k.task for k in self.log.kills}
                working = sorted(s for s, t in self.holding.items() if t not in killed and not self.agents[s].done())
                if not working:
                    await self.pause(0.02)
            if working and not self.done.is_set():
                await self.kill(rng.choice(working))


async def run_team(setup: TeamSetup, timeout: float) -> tuple[Team, bool]:
    """Connect K agents, start the clock, work the plan (with kills) until it is done or
    `timeout` seconds pass; every agent (and so every server) ended on the way out.
    Returns the team (its log, t_go) and whether the plan was finished in time."""
    team = Team(setup)
    for slot in range(setup.k):
        team.spawn(slot, 0)
    killer: asyncio.Task[None] | None = None
    finished = False
    try:
        while team.connected < setup.k:
            if any(a.done() for a in team.agents.values()):
                for a in team.agents.values():
                    if a.done() and a.exception() is not None:
                        raise a.exception()  # type: ignore[misc]
            await asyncio.sleep(0.02)
        team.t_go = time.monotonic()
        team.go.set()
        killer = asyncio.create_task(team.killer())
        await team.supervise(time.monotonic() + timeout)
        finished = team.done.is_set()
        team.t_stop = time.monotonic()
    finally:
        team.done.set()
        for t in [*([killer] if killer else []), *team.agents.values()]:
            t.cancel()
        for t in [*([killer] if killer else []), *team.agents.values()]:
            with contextlib.suppress(BaseException):
                await t
    return team, finished


def kill_leftovers(run_tag: str) -> int:
    """SIGKILL any agent server of this run still alive (found by its marker): every
    process ends with the run, even after an error. How many were left."""
    prefix = f"{MARKER}={run_tag}-".encode()
    left = 0
    for pid, argv in processes():
        if any(a.startswith(prefix) for a in argv):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                left += 1
    return left
