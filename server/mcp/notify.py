"""Telling listening clients that plans changed, whoever changed them.

One watcher per server, fed by the store's change feed (store.ChangeFeed: the file
store's OS watcher, the database's LISTEN/NOTIFY), so an idle server does nothing.
Without a feed, or when it fails, it polls the store's plan versions every
WATCH_INTERVAL instead (server/changes.follow, as every follower of a store). Even while
following a feed, versions are compared every
SAFETY_NET_S, for a change made before the feed began (or a notice the database lost);
what a plan's name from the feed and what its version say are weighed by one rule
(server/changes.PlanChanges), so that one write is told once, never before it lands. Changes made
by this process, by another server process or by hand all reach clients the same way:
2026 clients through the subscription bus (`subscriptions/listen`), 2025 clients
through their connection's standalone channel.

2025 state is kept per connection, never per `ctx.session`: the SDK builds a new
`ServerSession` for every request, so a subscription stored under it can never be
found again (unsubscribe missed it, each subscribe added another copy of every
notification). The `Connection` lives as long as the client's stdio pipe or HTTP
session (mcp-session-id), and its exit stack tells us when it ends.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from planning_core import PlanningError, StorageError
from planning_core.store import PlanStore

from ..common.changes import FEED_SETTLE, POLL_SETTLE, PlanChanges, follow
from .sdk import connection_of

log = logging.getLogger(__name__)

ACTIVE_URI = "plans://active"
WATCH_INTERVAL = 0.25  # the poll, where the store has no change feed
SAFETY_NET_S = 2.0  # plan versions are compared at least this often while following a feed
# Far more than the plans and tasks a client can watch; a client asking for more is
# refused rather than allowed to grow the server without bound.
MAX_SUBSCRIPTIONS = 1_000
# A client that stops reading must not hold the watcher (and every other client's
# notices) back: a notice it cannot take in this time is dropped for it.
SEND_TIMEOUT = 2.0


def plan_uri(name: str) -> str:
    return f"plans://{name}"


def _is_legacy(connection: Connection) -> bool:
    """A 2025 connection with a channel for server-initiated notices. 2026 clients get
    theirs from `subscriptions/listen` (the SDK drops them elsewhere at that era)."""
    return connection.protocol_version not in MODERN_PROTOCOL_VERSIONS and connection.has_standalone_channel


class Notifier:
    def __init__(self, bus: InMemorySubscriptionBus) -> None:
        self.bus = bus
        # Every open 2025 connection and the set of URIs it subscribed to.
        self.connections: dict[Connection, set[str]] = {}

    def track(self, connection: Connection) -> set[str]:
        """Register a connection once; it is forgotten when the connection ends."""
        uris = self.connections.get(connection)
        if uris is None:
            uris = self.connections[connection] = set()
            connection.exit_stack.callback(self.connections.pop, connection, None)
        return uris

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Know every connected 2025 client, subscribed or not: the server advertises
        resources.listChanged, so each of them is owed the list-changed notice."""
        result = await call_next(ctx)
        connection = connection_of(ctx)
        if connection is not None and connection.initialize_accepted and _is_legacy(connection):
            self.track(connection)
        return result

    async def on_subscribe(self, ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams) -> EmptyResult:
        connection = connection_of(ctx)
        if connection is None or not _is_legacy(connection):
            return EmptyResult()  # nothing to send notices on (stateless HTTP): nothing to keep
        uris = self.track(connection)
        uri = str(params.uri)
        if uri not in uris and len(uris) >= MAX_SUBSCRIPTIONS:
            raise MCPError(
                INVALID_PARAMS,  # the client's request is over a bound, not a server fault
                f"Subscription limit reached ({MAX_SUBSCRIPTIONS} resources per session); unsubscribe from some first.",
            )
        uris.add(uri)
        return EmptyResult()

    async def on_unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams
    ) -> EmptyResult:
        connection = connection_of(ctx)
        if connection is not None:
            self.connections.get(connection, set()).discard(str(params.uri))
        return EmptyResult()

    async def resource_updated(self, uri: str) -> None:
        targets = [c for c, uris in list(self.connections.items()) if uri in uris]
        await _to_each(targets, lambda c: c.send_resource_updated(uri))  # never raises: notices are advisory
        await self.bus.publish(ResourceUpdated(uri=uri))

    async def list_changed(self) -> None:
        await _to_each(list(self.connections), lambda c: c.send_resource_list_changed())
        await self.bus.publish(ResourcesListChanged())


async def _to_each(connections: list[Connection], send: Callable[[Connection], Awaitable[None]]) -> None:
    """Send to every connection at once, each bounded by SEND_TIMEOUT: clients that stopped
    reading cost the others at most that, however many they are (one after another, N of
    them held every notice back N × SEND_TIMEOUT)."""

    async def one(connection: Connection) -> None:
        with anyio.move_on_after(SEND_TIMEOUT):
            await send(connection)

    async with anyio.create_task_group() as tg:
        for connection in connections:
            tg.start_soon(one, connection)


async def watch(store: PlanStore, notifier: Notifier, interval: float = WATCH_INTERVAL) -> None:
    """Notify on every change until cancelled: what the store's change feed names where it
    has one (the OS watcher of the file store, the database's LISTEN/NOTIFY; and, every
    SAFETY_NET_S, what plan versions show), else by polling plan versions every `interval`
    (changes.follow).

    Following blocks, so it runs in a daemon thread of its own that only ever hands names
    over without waiting (call_soon_threadsafe): a thread waiting on the event loop (as
    anyio.from_thread does) hangs for ever once that loop is gone, and a worker thread of
    the loop's pool would then hold the interpreter's exit."""
    changes = PlanChanges(await anyio.to_thread.run_sync(store.plan_versions), FEED_SETTLE)
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()
    pending: set[str] = set()
    polling = threading.Event()
    lock = threading.Lock()
    stop = threading.Event()

    def failed(e: StorageError) -> None:  # no watches left, a file system the OS cannot watch, ...
        log.warning("cannot follow changes of %s (%s); polling every %s s", store.describe(), e, interval)

    def pump() -> None:
        for tick in follow(store, stop, feed_wait=SAFETY_NET_S, poll_every=interval, failed=failed):
            with lock:
                pending.update(tick.names)
            if tick.polling:
                polling.set()
            try:
                loop.call_soon_threadsafe(wake.set)
            except RuntimeError:  # the loop is closed: nobody listens any more
                return

    threading.Thread(target=pump, name="plan-changes", daemon=True).start()
    try:
        while True:
            await wake.wait()
            wake.clear()
            with lock:
                names = set(pending)
                pending.clear()
            if polling.is_set():
                changes.settle = POLL_SETTLE
            try:
                await _report(store, notifier, changes, names)
            except (OSError, PlanningError) as e:
                log.warning("cannot read the plans in %s: %s", store.describe(), e)
    finally:
        stop.set()


async def _report(store: PlanStore, notifier: Notifier, changes: PlanChanges, named: set[str]) -> None:
    """Notify about the plans that changed (by the feed's names and the plan versions)."""
    current = await anyio.to_thread.run_sync(store.plan_versions)
    changed = changes.update(named, current, time.monotonic())
    if not changed.plans:
        return
    for name in changed.plans:
        await notifier.resource_updated(plan_uri(name))
    await notifier.resource_updated(ACTIVE_URI)
    if changed.came_or_went:
        await notifier.list_changed()
