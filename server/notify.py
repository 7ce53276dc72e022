"""Telling listening clients that plans changed, whoever changed them.

One watcher per server: the OS tells it of every change under the store's folders
(watchfiles: inotify, FSEvents, ReadDirectoryChangesW), within STEP_MS of the last
event of a burst, so an idle server does nothing. Where the OS cannot watch, it polls
the store's plan versions every WATCH_INTERVAL instead. Even while watching, versions
are compared every SAFETY_NET_MS, for a change made before the watch began. Changes made
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

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from planning_core.store import PlanStore

from .sdk import connection_of

log = logging.getLogger(__name__)

ACTIVE_URI = "plans://active"
WATCH_INTERVAL = 0.25  # the poll, where the OS cannot watch
STEP_MS = 20  # a burst of events (one write: temp file, rename, folder fsync) is over after this quiet
DEBOUNCE_MS = 200  # ... or at most this long after its first event
SAFETY_NET_MS = 2_000
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
    """Notify on every change until cancelled: from the OS where it can watch the
    store's folders, else by polling plan versions every `interval`."""
    previous = await anyio.to_thread.run_sync(store.plan_versions)
    roots = store.watch_roots()
    if roots:
        try:
            previous = await _watch_os(store, notifier, roots, previous)
        except Exception as e:  # no watches left, a file system the OS cannot watch: poll
            log.warning("cannot watch %s (%s); polling every %s s", ", ".join(map(str, roots)), e, interval)
    while True:
        await anyio.sleep(interval)
        try:
            previous = await _report(store, notifier, previous, ())
        except OSError as e:
            log.warning("cannot watch the planning root: %s", e)


async def _watch_os(
    store: PlanStore, notifier: Notifier, roots: list[str], previous: dict[str, object]
) -> dict[str, object]:
    from watchfiles import awatch  # imported here: the poll needs nothing of it

    async for changes in awatch(
        *roots,
        watch_filter=None,
        debounce=DEBOUNCE_MS,
        step=STEP_MS,
        rust_timeout=SAFETY_NET_MS,
        yield_on_timeout=True,
        recursive=True,
        ignore_permission_denied=True,
    ):
        try:
            previous = await _report(store, notifier, previous, (path for _, path in changes))
        except OSError as e:
            log.warning("cannot read the planning root: %s", e)
    return previous


async def _report(
    store: PlanStore, notifier: Notifier, previous: dict[str, object], paths: Iterable[str]
) -> dict[str, object]:
    """Notify about plans whose version moved or whose files the OS named; the new versions."""
    current = await anyio.to_thread.run_sync(store.plan_versions)
    touched = store.plans_of(paths) & current.keys()  # a file edited in place moves no version
    changed = sorted(
        {n for n in current.keys() | previous.keys() if current.get(n) != previous.get(n)} | touched
    )
    if not changed:
        return current
    came_or_went = current.keys() != previous.keys() or any(
        n in previous and n in current and _place(current[n]) != _place(previous[n]) for n in changed
    )
    for name in changed:
        await notifier.resource_updated(plan_uri(name))
    await notifier.resource_updated(ACTIVE_URI)
    if came_or_went:
        await notifier.list_changed()
    return current


def _place(version: object) -> object:
    return version[0] if isinstance(version, tuple) else version
