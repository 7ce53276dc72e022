"""Latency series and their statistics, and the echo floor each latency is paired with.

Each call to our server (or a peer) is followed by one `echo` call on the floor server
(bench/echo_server.py, the smallest MCPServer on the same SDK), kept open for the whole
run, so every latency also has a floor measured at the same moment: on a shared, busy
machine the ratio to the floor is the figure to read. The same server's `durable_write`
tool is a write's floor: the contract's disk work alone, through the SDK."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from mcp import Client
from mcp.types import CallToolResult

from bench.servers import check


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def p95(xs: list[float]) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, -(-95 * len(s) // 100) - 1))]  # nearest rank


@dataclass
class Series:
    """Latencies (seconds) of one operation, and of the echo calls made beside it."""

    ours: list[float] = field(default_factory=list)
    echo: list[float] = field(default_factory=list)

    # The medians and 95th percentile the tables quote.
    med = property(lambda self: median(self.ours))
    p95 = property(lambda self: p95(self.ours))
    echo_med = property(lambda self: median(self.echo))

    @property
    def ratio(self) -> float:
        return median(self.ours) / median(self.echo)


def above(ours: Series, floor: Series) -> float:
    """Seconds `ours` takes above `floor`, at the speed of the echo calls made beside ours.
    Each is a ratio to the echo measured at the same moment, so the machine's drift between
    the two series cancels (their raw medians may be minutes apart)."""
    return (ours.ratio - floor.ratio) * ours.echo_med


WARM_UP_CALLS = 20


class Floor:
    """The echo server, open for the whole run; each `call()` times one echo call."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def call(self) -> float:
        return await self.timed_call("echo", {"text": "hello"})

    async def timed_call(self, tool: str, args: dict[str, Any]) -> float:
        """Seconds for one call of one of the floor server's tools (bench/echo_server.py)."""
        dt, r = await timed(self.client.call_tool(tool, args))
        check(r, tool)
        return dt

    async def paired(self, tool: str, args: dict[str, Any], calls: int) -> Series:
        """`calls` calls of a floor tool (`durable_write`, `replay`), each followed by an echo
        call, as our own calls are."""
        s = Series()
        for _ in range(calls):
            s.ours.append(await self.timed_call(tool, args))
            s.echo.append(await self.call())
        return s

    async def warm_up(self, calls: int = WARM_UP_CALLS) -> None:
        """Untimed calls first: the first ones pay for imports and caches."""
        for _ in range(calls):
            await self.call()


async def timed(coro: Awaitable[CallToolResult]) -> tuple[float, CallToolResult]:
    t = time.perf_counter()
    r = await coro
    return time.perf_counter() - t, r
