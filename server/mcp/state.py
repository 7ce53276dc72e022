"""Server state, built once per server object (in build_server) and never global."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, cast

import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from planning_core import PlanningError, Session
from planning_core.actions import Actions
from planning_core.caller import Caller
from planning_core.store import PlanStore, SharedSessions

from ..common.changes import ChangeCounter
from .hosts import client_name

log = logging.getLogger(__name__)

DEFAULT_SESSION = "default"
PROCESS_SESSION = "process"  # no request to tell clients apart: stdio, in-memory clients
MAX_SESSIONS = 1_000  # HTTP clients come and go; the least recently used are forgotten


@dataclass
class AppState:
    store: PlanStore
    actions: Actions
    sessions: OrderedDict[str, Session] = field(default_factory=OrderedDict)
    # The sessions tool calls hold, by key (HeldSession: loaded and locked in the store for
    # the call, saved after it): what the tool and the reminders of that call both change.
    # One call at a time holds a key: the store's lock of the session serialises the rest.
    held: dict[str, Session] = field(default_factory=dict)
    # The store, when it keeps sessions: decided once, not on every tool call.
    shared: SharedSessions | None = field(init=False)
    # The store's changes, followed while a claim waits for a task (claim_wait.py).
    changes: ChangeCounter = field(init=False)

    def __post_init__(self) -> None:
        self.shared = self.store if isinstance(self.store, SharedSessions) else None
        self.changes = ChangeCounter(self.store)

    def keeper(self, key: str) -> SharedSessions | None:
        """The store that keeps this session, if any. A stdio process is one session of its
        own (a stdio process is one session): no other server can ever name it, so it stays in this process,
        and its calls cost no round trips to a database (about 2 ms a call on PostgreSQL)."""
        return None if key == PROCESS_SESSION else self.shared

    def session(self, key: str) -> Session:
        """The session of `key`: the one a tool call holds, else (a shared store) as
        stored, else this process's own."""
        held = self.held.get(key)
        if held is not None:
            return held
        keeper = self.keeper(key)
        if keeper is not None:
            with keeper.edit_session(key) as data:  # a read: saved unchanged
                return Session.from_state(data)
        found = self.sessions.get(key)
        if found is None:
            found = self.sessions[key] = Session()
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)
        else:
            self.sessions.move_to_end(key)
        return found

    def caller(self, ctx: ServerRequestContext[Any, Any]) -> Caller:
        """Who calls, for the core: the history's author and the session of the request."""
        key = session_key(ctx)
        return Caller(history_author(ctx, key), self.session(key))

    def hold(self, key: str) -> HeldSession:
        """The session of `key` for one tool call (see HeldSession)."""
        return HeldSession(self, key)

    def plan_has_work(self, session: Session) -> bool:
        return self.actions.has_work(session.current_plan)


class HeldSession:
    """One session held for a tool call. With a store that keeps sessions (servers sharing
    a database, each request maybe on another) it is read and locked in the store for the
    call and written back after it, so requests alternating between servers see one todo
    list, current plan and reminder clock. Otherwise it is this process's own."""

    def __init__(self, state: AppState, key: str) -> None:
        self.state, self.key = state, key
        self._edit: AbstractContextManager[dict[str, Any]] | None = None
        self._data: dict[str, Any] = {}

    async def enter(self) -> Session:
        """Raises PlanningError when the store cannot give it (the call must not run)."""
        store = self.state.keeper(self.key)
        if store is None:
            return self.state.session(self.key)
        edit = store.edit_session(self.key)
        self._data = await anyio.to_thread.run_sync(edit.__enter__)
        self._edit = edit
        session = Session.from_state(self._data)
        self.state.held[self.key] = session
        return session

    async def leave(self, session: Session) -> str | None:
        """Write the session back; the reason when that failed (the call's own answer stands)."""
        if self.state.held.get(self.key) is session:
            del self.state.held[self.key]
        if self._edit is None:
            return None
        self._data.clear()
        self._data.update(session.to_state())
        try:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self._edit.__exit__, None, None, None)
        except PlanningError as e:
            log.warning("session %s not saved: %s", self.key, e)
            return str(e)
        return None


def history_author(ctx: ServerRequestContext[Any, Any], key: str) -> str:
    """Who wrote, in the plans' history: the session's key, but for the process's one
    session (stdio) the client's self-given name (e.g. claude-code), which says more than
    the key; unnamed, "stdio client"."""
    if key != PROCESS_SESSION:
        return key
    return client_name(ctx) or "stdio client"


def session_key(ctx: ServerRequestContext[Any, Any]) -> str:
    """A stdio process is one session; over HTTP the mcp-session-id header (2025 streamable
    HTTP) or the SSE session_id, else the authenticated client, else one shared default
    session. A 2026-07-28 request is stateless: it has no session, whatever header or query
    it carries, so it is the default session (a session id it names, a live 2025 session's
    included, is not its to use), and never makes a session of its own."""
    request = ctx.request
    if request is None:
        return PROCESS_SESSION
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return DEFAULT_SESSION
    headers: Mapping[str, str] | None = getattr(request, "headers", None)
    if headers is not None:
        sid = headers.get("mcp-session-id")
        if sid:
            return f"http:{sid}"
    query = getattr(request, "query_params", None)
    if query is not None and query.get("session_id"):
        return f"sse:{query.get('session_id')}"
    # One configured token means one client identity: the shared default session.
    return DEFAULT_SESSION


def app_state(ctx: Context) -> AppState:
    """The state the lifespan built, as seen from a tool, resource or prompt."""
    return cast(AppState, ctx.request_context.lifespan_context)
