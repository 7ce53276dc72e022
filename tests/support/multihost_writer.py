"""The writers of one host in the multi-host test: N MCP clients (one session each) of
the host's server, creating, linking, claiming and completing tasks on one shared plan,
every call and its outcome logged as a JSON line.

    python -m tests.support.multihost_writer --url http://127.0.0.1:P/mcp --host 1 \
        --plan-name mh --writers 8 --phases 5,5,5 --log FILE [--seed]

The test drives it over stdin/stdout, a handshake rather than a clock: the process prints
`ready` once every client is connected (and, with --seed, the plan and its hot tasks
exist), then for each phase waits for a `go` line, runs the phase in all writers at once
and prints `done K`. A `ping` line is answered `pong SECONDS` after an MCP ping of the
server (is it serving, whatever the database does?). It exits after the last phase.

Each write names its writer and operation in the task's metadata ({writer: op}), so the
test can tell from the stored plan which writes were applied: a write whose outcome was
"not applied" (or a refusal) must have left no trace, an acknowledged one must be there.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from mcp import Client
from mcp.types import CallToolResult

from planning_core.errors import DatabaseLost
from tests.support.waits import bound

PLAN_DATE = "2026-05-28"
HOT = 4  # tasks #1..#4: never linked, claimed by everyone (the contended ones)
PATTERN = "CCKLCKDLCKLDCKL"  # Create, Link, Klaim, Done: one writer's 15 operations
CALL_TIMEOUT = bound(60)  # seconds: a call stalled by a cut link must still come back

# What an error result says became of the write (planning_core.errors).
# Order matters: the first marker found wins.
DB_OUTCOMES = (
    (DatabaseLost.OUTCOMES["applied"], "applied"),
    (DatabaseLost.OUTCOMES["unknown"], "unknown"),
    (DatabaseLost.OUTCOMES["read"], "read_lost"),
    (DatabaseLost.OUTCOMES["not applied"], "not_applied"),
    ("Nothing was changed", "not_applied"),  # unreachable, refused by the database, busy
)
REFUSALS = (
    ("is already in progress under owner", "conflict"),
    ("cannot start: it is blocked", "blocked"),
    ("would close a cycle", "cycle"),
    ("cannot block or be blocked by itself", "self"),
    ("not found in plan", "not_found"),
)
ACKED = ("ok", "applied")  # the write is stored
MAYBE = ("unknown", "read_lost")  # stored or not: the error says to check
DATABASE_ERRORS = ("applied", "unknown", "read_lost", "not_applied")


def classify(result: CallToolResult) -> tuple[str, str]:
    """(outcome, text) of a tool result: ok, a database outcome, a refusal, `traceback`
    or `other` (an error this test does not know: a failure)."""
    text = "\n".join(b.text for b in result.content if b.type == "text")
    if not result.is_error:
        return "ok", text
    if "Traceback" in text:
        return "traceback", text
    for marker, outcome in (*DB_OUTCOMES, *REFUSALS):
        if marker in text:
            return outcome, text
    return "other", text


@dataclass
class Shared:
    """What one host's writers know together: the highest task id seen."""

    top: int = HOT
    lock: threading.Lock = field(default_factory=threading.Lock)

    def saw(self, task_id: int) -> None:
        self.top = max(self.top, task_id)


@dataclass(eq=False)  # each writer is itself: compared and hashed by identity
class Writer:
    name: str
    client: Client
    plan: str
    shared: Shared
    rng: random.Random
    log: TextIO
    op: int = 0
    held: list[int] = field(default_factory=list)  # tasks this writer holds by an acknowledged claim

    async def call(self, kind: str, tool: str, args: dict[str, Any], phase: int, task: int | None) -> tuple[str, Any]:
        self.op += 1
        args = {**args, "plan": self.plan, "metadata": {self.name: self.op}}
        t0 = time.monotonic()
        structured: Any = None
        said: str | None = None  # what a non-result said of the write, if it said anything
        try:
            result = await self.client.call_tool(tool, args, read_timeout_seconds=CALL_TIMEOUT)
            outcome, text = classify(result)
            structured = result.structured_content
        except Exception as e:  # not a tool result (a JSON-RPC error, a lost transport): the test judges it
            outcome, text = "transport", f"{type(e).__name__}: {e}"
            said = next((o for marker, o in DB_OUTCOMES if marker in text), None)
        t1 = time.monotonic()
        if kind == "create" and outcome == "ok" and structured:
            task = int(structured["task"]["id"])
            self.shared.saw(task)
        record = {
            "writer": self.name,
            "op": self.op,
            "phase": phase,
            "kind": kind,
            "task": task,
            "args": {k: v for k, v in args.items() if k not in ("plan", "metadata", "description")},
            "t0": t0,
            "t1": t1,
            "outcome": outcome,
            "said": said,
            "text": text[:400],
        }
        self.log.write(json.dumps(record) + "\n")
        self.log.flush()
        return outcome, structured

    def some_task(self) -> int:
        return self.rng.randint(HOT + 1, self.shared.top)

    async def step(self, letter: str, phase: int) -> None:
        linkable = self.shared.top - HOT >= 2
        if letter == "D" and self.held:
            task = self.held.pop(0)
            await self.call(
                "complete", "TaskUpdate", {"taskId": task, "status": "completed", "owner": self.name}, phase, task
            )
        elif letter in "KD":
            hot = self.rng.random() < 0.5 or self.shared.top == HOT
            task = self.rng.randint(1, HOT) if hot else self.some_task()
            claim = {"taskId": task, "status": "in_progress", "owner": self.name}
            outcome, _ = await self.call("claim", "TaskUpdate", claim, phase, task)
            if outcome in ACKED and task not in self.held:
                self.held.append(task)
        elif letter == "L" and linkable:
            a = self.some_task()
            b = self.some_task()
            while b == a:
                b = self.some_task()
            await self.call("link", "TaskUpdate", {"taskId": a, "addBlockedBy": [b]}, phase, a)
        else:
            subject = f"mh {self.name} op {self.op + 1} {self.rng.getrandbits(32):08x}"
            await self.call("create", "TaskCreate", {"subject": subject, "description": "multi-host"}, phase, None)


def seed_args(plan_name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    plan = {"title": "Multi-host", "analysis": "a", "approach": "b", "name": plan_name, "date": PLAN_DATE}
    hot = [{"subject": f"hot {i}", "description": "claimed by all"} for i in range(1, HOT + 1)]
    return plan, hot


def plan_of(plan_name: str) -> str:
    return f"{PLAN_DATE}-{plan_name}"


async def _seed(client: Client, plan_name: str) -> None:
    plan, hot = seed_args(plan_name)
    for tool, args in [("PlanCreate", plan), *(("TaskCreate", {**h, "plan": plan_of(plan_name)}) for h in hot)]:
        result = await client.call_tool(tool, args)
        outcome, text = classify(result)
        if outcome != "ok":
            raise SystemExit(f"seeding failed at {tool}: {text}")


class Lines:
    """Lines from the test on stdin, read in a thread (stdin is a pipe)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def pump() -> None:
            for line in sys.stdin:
                loop.call_soon_threadsafe(self.queue.put_nowait, line.strip())
            loop.call_soon_threadsafe(self.queue.put_nowait, "")

        threading.Thread(target=pump, daemon=True).start()


def say(line: str) -> None:
    print(line, flush=True)


async def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--host", type=int, required=True)
    p.add_argument("--plan-name", required=True)
    p.add_argument("--writers", type=int, default=8)
    p.add_argument("--phases", default="15")
    p.add_argument("--log", type=Path, required=True)
    p.add_argument("--seed", action="store_true", help="create the plan and its hot tasks first")
    p.add_argument("--random-seed", type=int, default=0)
    args = p.parse_args(argv)
    phases = [int(n) for n in args.phases.split(",")]
    plan = plan_of(args.plan_name)
    shared = Shared()
    lines = Lines()
    async with connected(args.url, args.writers) as clients:
        if args.seed:
            await _seed(clients[0], args.plan_name)
        with args.log.open("w", encoding="utf-8") as log:
            writers = [
                Writer(
                    f"h{args.host}w{i}",
                    c,
                    plan,
                    shared,
                    random.Random(args.random_seed * 1000 + args.host * 100 + i),
                    log,
                )
                for i, c in enumerate(clients)
            ]
            say("ready")
            start = 0
            for number, size in enumerate(phases, 1):
                while (line := await lines.queue.get()) == "ping":
                    await ping(clients[0])
                if line != "go":
                    return 3  # the test went away
                letters = [PATTERN[(start + k) % len(PATTERN)] for k in range(size)]

                async def run(w: Writer, letters: list[str] = letters, number: int = number) -> None:
                    for letter in letters:
                        await w.step(letter, number)

                phase = asyncio.gather(*(run(w) for w in writers))
                while not phase.done():  # answer pings while the phase runs
                    getter = asyncio.ensure_future(lines.queue.get())
                    either: set[asyncio.Future[Any]] = {phase, getter}
                    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
                    if getter.done():
                        if getter.result() == "ping":
                            await ping(clients[0])
                    else:
                        getter.cancel()
                await phase
                start += size
                say(f"done {number}")
    return 0


async def ping(client: Client) -> None:
    t0 = time.monotonic()
    try:
        await client.send_ping()
        say(f"pong {time.monotonic() - t0:.3f}")
    except Exception as e:
        say(f"ping failed {type(e).__name__}: {e}")


@contextlib.asynccontextmanager
async def connected(url: str, n: int) -> AsyncIterator[list[Client]]:
    """N clients of one server, each its own session (legacy mode: an mcp-session-id each,
    so that each writer is one session, as N agents would be)."""
    async with contextlib.AsyncExitStack() as stack:
        yield [await stack.enter_async_context(Client(url, mode="legacy")) for _ in range(n)]


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
