"""A claim of the next task that waits for one (TaskUpdate taskId "next" with waitSeconds).

With nothing ready but work left for the claim, the call stays open: it tries again as soon
as the store's change feed says a plan changed (the server's one follower of the store,
server/changes.ChangeCounter: the file store's OS watcher, the database's LISTEN) or when
the first lease on that work runs out, and answers with the claim, or, once waitSeconds
have passed, with the refusal as it stands then. It does not poll the plan: between tries
it only waits. While it waits it holds no lock and no thread (each try is one ordinary
claim, off the event loop), tells the client how long it has waited (a progress
notification, where the client sent a progressToken), and ends at once when the client
cancels or goes away (the SDK cancels the call; nothing was claimed for it). The first
claim to wait on a server starts that follower, and waits for its first look (within
FEED_WAIT) before it tries again and tells the client it waits: a change made while the feed
was starting is then seen by that try, not lost until the follower's next comparison.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

import anyio
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent

from planning_core import PlanningError, update
from planning_core.errors import NothingReady

from ..common.changes import FEED_WAIT
from .state import app_state

PROGRESS_EVERY = 5.0  # seconds between progress notifications while a claim waits
# A lease runs out at a whole second (its stamp); the try after it comes this much later,
# so the clocks that judge it agree it has run out.
LEASE_SLACK = 0.05

ARM_WAIT = FEED_WAIT + 1.0  # a follower starting looks within FEED_WAIT; past this it is late
Attempt = Callable[[], Awaitable[tuple[CallToolResult, PlanningError | None]]]


async def claim(ctx: Context, attempt: Attempt, wait_seconds: object, task_id: object) -> CallToolResult:
    """Try the claim (`attempt`: the result, and the refusal it raised if any); while it
    finds nothing ready but work left, wait for a change or a lease, and try again, for at
    most `wait_seconds`."""
    try:
        seconds = update.wait_seconds(wait_seconds, task_id)
    except PlanningError as e:
        return CallToolResult(content=[TextContent(type="text", text=str(e))], is_error=True)
    result, refusal = await attempt()
    if not _worth_waiting(refusal):
        return result  # claimed, refused for another reason, or no work left: no follower started
    state = app_state(ctx)
    loop = asyncio.get_running_loop()
    moved = asyncio.Event()

    def wake() -> None:  # from the follower's thread
        with contextlib.suppress(RuntimeError):  # the loop has ended: nobody waits any more
            loop.call_soon_threadsafe(moved.set)

    start = time.monotonic()
    deadline = start + seconds
    with state.changes.listening(wake):
        if not state.changes.armed.is_set():  # the follower is starting: until it looks (it says so)
            with anyio.move_on_after(ARM_WAIT):
                await moved.wait()
        while True:
            moved.clear()  # before the try: a change during it wakes the next wait at once
            result, refusal = await attempt()  # the first once listening: a change before it is seen
            if not _worth_waiting(refusal) or time.monotonic() >= deadline:
                return result
            assert isinstance(refusal, NothingReady)
            wake_by = deadline
            if refusal.wake_at is not None:
                lease = (refusal.wake_at - state.actions.clock()).total_seconds() + LEASE_SLACK
                wake_by = min(wake_by, time.monotonic() + max(lease, 0.0))
            await _wait(ctx, moved, wake_by, start, seconds)


def _worth_waiting(refusal: PlanningError | None) -> bool:
    return isinstance(refusal, NothingReady) and refusal.work_left


async def _wait(ctx: Context, moved: asyncio.Event, wake_by: float, start: float, seconds: int) -> None:
    """Until the store changes or `wake_by`, telling the client every PROGRESS_EVERY s."""
    while not moved.is_set():
        now = time.monotonic()
        if now >= wake_by:
            return
        waited = round(now - start, 1)
        await ctx.report_progress(waited, seconds, f"Waiting for a task to become ready ({waited:g} of {seconds} s)")
        with anyio.move_on_after(min(wake_by - now, PROGRESS_EVERY)):
            await moved.wait()
