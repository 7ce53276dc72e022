"""The board's open pages, fed from one build per board.

Every page streaming the same board (the same `plan` asked for) shares one `Shown`: its
last JSON and an edition that moves when that JSON changes. One pump per site looks at
the change counter (server/common/changes.py: one follower of the store's change feed for the
whole process) every POLL_INTERVAL and rebuilds each shown board once when it moved;
with no change, only when a lease on it runs out (its task moves to Ready with no write)
and, while the counter polls instead of following a feed (where a file edited in place
moves no plan version), every FULL_CHECK. The pages themselves only wait for a new
edition, so a page costs nothing while its plan is unchanged, however many are open: the
builds follow the changes and the boards shown, never the number of pages."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import anyio
import anyio.to_thread

from planning_core import PlanningError

from ..common.changes import ChangeCounter

log = logging.getLogger(__name__)

POLL_INTERVAL = 0.1  # how often the pump looks at the change counter (and at shutdown)
FULL_CHECK = 5.0  # polling: each shown board is rebuilt this often (its JSON sent only if it differs)
LAPSE_MARGIN = 0.5  # a board is rebuilt this long after a lease on it ran out, so the build sees it out
KEEPALIVE = 15.0  # a comment line, so proxies and the browser keep an idle stream open


@dataclass(eq=False)
class Shown:
    """One board as pages ask for it, and how many pages stream it."""

    plan: str | None
    pages: int = 0
    data: str = ""
    edition: int = 0  # moves each time `data` changes; 0: not built yet
    seen: int = -1  # the change counter when it was last built
    due: float = 0.0  # when it is rebuilt with no change (time.monotonic)
    moved: anyio.Event = field(default_factory=anyio.Event)  # set (and replaced) when the edition moves

    def publish(self, data: str) -> None:
        if data != self.data:
            self.data, self.edition = data, self.edition + 1
            self.moved.set()
            self.moved = anyio.Event()

    def wake(self) -> None:
        self.moved.set()
        self.moved = anyio.Event()


class LiveBoards:
    """The shown boards of one site and the pump that keeps them current."""

    def __init__(
        self,
        build: Callable[[str | None], tuple[str, float | None]],  # the JSON, and seconds to its next lapse
        changes: ChangeCounter,
        stopping: Callable[[], bool],
    ) -> None:
        self.build = build
        self.changes = changes
        self.stopping = stopping
        self.shown: dict[str | None, Shown] = {}
        self._pump: asyncio.Task[None] | None = None

    async def stream(self, plan: str | None) -> AsyncIterator[str]:
        """One page's event stream: the board at each new edition, keep-alives between."""
        shown = self._join(plan)
        try:
            yield "retry: 1000\n\n"
            sent = 0
            while not self.stopping() and self._pump is not None:  # a pump that failed ends its pages
                if shown.edition != sent:
                    sent = shown.edition
                    yield f"event: board\ndata: {shown.data}\n\n"
                    continue
                moved = shown.moved  # taken with the edition compared above: no change falls between
                with anyio.move_on_after(KEEPALIVE) as waited:
                    await moved.wait()
                if waited.cancelled_caught:
                    yield ": still here\n\n"
        finally:
            self._leave(shown)

    def _join(self, plan: str | None) -> Shown:
        shown = self.shown.get(plan)
        if shown is None:
            shown = self.shown[plan] = Shown(plan)
        shown.pages += 1
        if self._pump is None:
            self._pump = asyncio.get_running_loop().create_task(self._run_pump())
        return shown

    def _leave(self, shown: Shown) -> None:
        shown.pages -= 1
        if shown.pages == 0 and self.shown.get(shown.plan) is shown:
            del self.shown[shown.plan]

    async def _run_pump(self) -> None:
        """While any page is open: rebuild each shown board once per change (and every
        FULL_CHECK). Ends with the last page, or at shutdown, waking every page."""
        try:
            while self.shown and not self.stopping():
                current = self.changes.current()
                for shown in list(self.shown.values()):
                    if shown.seen != current or time.monotonic() >= shown.due:
                        await self._rebuild(shown, current)
                await anyio.sleep(POLL_INTERVAL)
        finally:
            self._pump = None  # no await since the loop's last check: a page joining now starts another
            for shown in self.shown.values():
                shown.wake()

    async def _rebuild(self, shown: Shown, current: int) -> None:
        # The counter is read before the build: a change during it moves the counter again.
        shown.seen = current
        shown.due = time.monotonic() + (math.inf if self.changes.following else FULL_CHECK)
        try:
            data, lapse = await anyio.to_thread.run_sync(self.build, shown.plan)
        except (OSError, PlanningError) as e:  # the database away for a moment: try again later
            log.warning("cannot build the board of %s: %s", shown.plan or "the first plan", e)
            shown.due = min(shown.due, time.monotonic() + FULL_CHECK)
            return
        if lapse is not None:
            shown.due = min(shown.due, time.monotonic() + lapse + LAPSE_MARGIN)
        shown.publish(data)
