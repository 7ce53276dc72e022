"""Resumable streamable HTTP: every SSE event gets an id, and a client that lost its stream
sends `GET` with `Last-Event-ID` to get what came after it, from a bounded store in memory.

The SDK's EventStore interface knows streams only by their key: the JSON-RPC request id of a
POST (which every client counts from 0 or 1) or one shared key for the GET stream. One store
serves every session, so keys alone would mix sessions: a client resuming its request 1 would
be sent another session's answer to its request 1. `SessionScope` therefore records, per HTTP
request, which session it belongs to (a context variable, inherited by the session's tasks,
which the SDK starts from the request that opened the session), and a replay sends only
events of the requesting session.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from contextvars import ContextVar
from dataclasses import dataclass, field
from itertools import count
from typing import Any

from mcp.server.streamable_http import (
    MCP_SESSION_ID_HEADER,
    EventCallback,
    EventId,
    EventMessage,
    EventStore,
    StreamId,
)
from mcp_types import JSONRPCMessage, jsonrpc_message_adapter

from ..common.exposure import HttpWrapper

# A replay serves a client that reconnects within seconds, so a few dozen events a stream is
# plenty: a POST's stream holds a priming event, its answer and any progress on the way; the GET
# stream holds notifications. The cap keeps one chatty stream (a session that subscribed and then
# went away) from evicting other sessions' answers in flight.
MAX_EVENTS_PER_STREAM = 64
# All sessions together. Each event is also counted by its JSON size, because one answer can be
# megabytes (a task's description is bounded only by the 4 MiB request limit): the total stays
# under the byte budget plus at most one event (the newest is always kept, so it can be replayed).
MAX_EVENTS_TOTAL = 4096
MAX_EVENT_BYTES_TOTAL = 16 * 1024 * 1024

SESSION_HEADER = MCP_SESSION_ID_HEADER.encode("ascii")


@dataclass(eq=False)
class _Owner:
    """The session an HTTP request belongs to; for the request that opens a session, filled in
    when its answer names the new session (before the client can know the id to resume with)."""

    session: str | None = None


_owner: ContextVar[_Owner | None] = ContextVar("planning_mcp_stream_owner", default=None)


class SessionScope(HttpWrapper):
    """ASGI wrapper that tells the event store which session each HTTP request belongs to."""

    async def http(self, scope: Any, receive: Any, send: Any) -> None:
        given = dict(scope["headers"]).get(SESSION_HEADER)
        owner = _Owner(given.decode("latin-1") if given is not None else None)
        reset = _owner.set(owner)
        try:
            if given is not None:
                await self.app(scope, receive, send)
                return

            async def note_session(message: Any) -> None:
                if message["type"] == "http.response.start" and owner.session is None:
                    named = dict(message.get("headers", [])).get(SESSION_HEADER)
                    if named is not None:
                        owner.session = named.decode("latin-1")
                await send(message)

            await self.app(scope, receive, note_session)
        finally:
            _owner.reset(reset)


@dataclass(eq=False)
class _Event:
    owner: _Owner | None
    stream: StreamId
    data: bytes | None  # the message as JSON; None for the SDK's priming event
    key: tuple[_Owner | None, StreamId] = field(init=False)

    def __post_init__(self) -> None:
        self.key = (self.owner, self.stream)  # owners compare by identity: one per opening request

    def size(self) -> int:
        return len(self.data) if self.data is not None else 0


class BoundedEventStore(EventStore):
    """Events in arrival order, at most `per_stream` a stream, `total` and `total_bytes` in all;
    the oldest go first. Everything runs on the server's one event loop, and no method awaits
    while changing the store, so it needs no lock."""

    def __init__(
        self,
        per_stream: int = MAX_EVENTS_PER_STREAM,
        total: int = MAX_EVENTS_TOTAL,
        total_bytes: int = MAX_EVENT_BYTES_TOTAL,
    ) -> None:
        self.per_stream, self.total, self.total_bytes = per_stream, total, total_bytes
        self._events: OrderedDict[int, _Event] = OrderedDict()
        self._streams: dict[tuple[_Owner | None, StreamId], deque[int]] = {}
        self._bytes = 0
        self._next = count(1)

    # No __len__ here: the SDK tests `if self._event_store:`, and an empty store that counted as
    # false would switch resumability off.

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        data = None if message is None else message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        event = _Event(_owner.get(), stream_id, data)
        seq = next(self._next)
        self._events[seq] = event
        self._bytes += event.size()
        in_stream = self._streams.setdefault(event.key, deque())
        in_stream.append(seq)
        if len(in_stream) > self.per_stream:
            self._drop(in_stream[0])
        while len(self._events) > 1 and (len(self._events) > self.total or self._bytes > self.total_bytes):
            self._drop(next(iter(self._events)))
        return str(seq)

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        """Send the events of the stream `last_event_id` is on that came after it, and name that
        stream so the SDK goes on with it live; None (nothing sent) for an id this store does not
        hold (never given, evicted, or another session's)."""
        seq = _parse(last_event_id)
        after = self._events.get(seq) if seq is not None else None
        asking = _owner.get()
        if seq is None or after is None or not _same_session(after.owner, asking):
            return None
        # A list first: sending awaits, and the store may change meanwhile.
        later = [
            (n, data)
            for n, e in self._events.items()
            if n > seq and (data := e.data) is not None and e.stream == after.stream and _same_session(e.owner, asking)
        ]
        for n, data in later:
            await send_callback(EventMessage(jsonrpc_message_adapter.validate_json(data), str(n)))
        return after.stream

    def _drop(self, seq: int) -> None:
        event = self._events.pop(seq)
        self._bytes -= event.size()
        in_stream = self._streams[event.key]
        in_stream.remove(seq)  # the oldest of its stream, so at the left: O(1) in practice
        if not in_stream:
            del self._streams[event.key]


def _parse(event_id: str) -> int | None:
    # Our ids are decimal sequence numbers; anything else (a huge or foreign header) is unknown.
    return int(event_id) if event_id.isascii() and event_id.isdigit() and len(event_id) <= 19 else None


def _same_session(stored: _Owner | None, asking: _Owner | None) -> bool:
    return stored is not None and asking is not None and stored.session is not None and stored.session == asking.session
