"""Telling listening clients that plans changed, whoever changed them.

One watcher polls the root (a stat per plan folder; every write renames a file
in its plan's folder, which bumps the folder's mtime), so changes made by this
process, by another server process or by hand all reach clients the same way:
2026 clients through the subscription bus, 2025 clients through the sessions
that called resources/subscribe.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged, ResourceUpdated
from mcp.types import EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams

from planning_core.store import PlanStore

log = logging.getLogger(__name__)

ACTIVE_URI = "plans://active"
WATCH_INTERVAL = 0.25


def plan_uri(name: str) -> str:
    return f"plans://{name}"


class Notifier:
    def __init__(self, bus: InMemorySubscriptionBus) -> None:
        self.bus = bus
        self.subscribers: dict[str, set[ServerSession]] = {}

    async def on_subscribe(self, ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams) -> EmptyResult:
        uri, session = str(params.uri), ctx.session
        self.subscribers.setdefault(uri, set()).add(session)
        # A closed session swallows sends silently, so forget it when its connection ends.
        connection = getattr(session, "_connection", None)
        if connection is not None:
            connection.exit_stack.callback(lambda: self.subscribers.get(uri, set()).discard(session))
        return EmptyResult()

    async def on_unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams
    ) -> EmptyResult:
        self.subscribers.get(str(params.uri), set()).discard(ctx.session)
        return EmptyResult()

    async def resource_updated(self, uri: str) -> None:
        for session in list(self.subscribers.get(uri, ())):
            try:
                await session.send_resource_updated(uri)
            except Exception:
                self.subscribers[uri].discard(session)
        await self.bus.publish(ResourceUpdated(uri=uri))

    async def list_changed(self) -> None:
        sessions = {s for group in self.subscribers.values() for s in group}
        for session in sessions:
            with contextlib.suppress(Exception):
                await session.send_resource_list_changed()
        await self.bus.publish(ResourcesListChanged())


async def watch(store: PlanStore, notifier: Notifier, interval: float = WATCH_INTERVAL) -> None:
    """Poll plan folders and notify on every change until cancelled."""
    previous = await anyio.to_thread.run_sync(store.plan_versions)
    while True:
        await anyio.sleep(interval)
        try:
            current = await anyio.to_thread.run_sync(store.plan_versions)
        except OSError as e:
            log.warning("cannot watch the planning root: %s", e)
            continue
        changed = sorted(n for n in current.keys() | previous.keys() if current.get(n) != previous.get(n))
        if not changed:
            continue
        came_or_went = current.keys() != previous.keys() or any(
            n in previous and n in current and _place(current[n]) != _place(previous[n]) for n in changed
        )
        previous = current
        for name in changed:
            await notifier.resource_updated(plan_uri(name))
        await notifier.resource_updated(ACTIVE_URI)
        if came_or_went:
            await notifier.list_changed()


def _place(version: object) -> object:
    return version[0] if isinstance(version, tuple) else version
