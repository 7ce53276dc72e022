"""Server state, built once per server object (in build_server) and never global."""

from __future__ import annotations

import sys
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, cast

import anyio.to_thread
from mcp.server.mcpserver import Context

from planning_core import Planner, Session
from planning_core.actions import Actions
from planning_core.store import PlanStore, SharedSessions

DEFAULT_SESSION = "default"
PROCESS_SESSION = "process"  # no request to tell clients apart: stdio, in-memory clients
MAX_SESSIONS = 1_000  # HTTP clients come and go; the least recently used are forgotten

# The session a tool call holds (SharedSessions: loaded and locked in the store for the
# call, saved after it): what the tool and the reminders of that call both change.
_held: ContextVar[tuple[str, Session] | None] = ContextVar("held_session", default=None)


@dataclass
class AppState:
    store: PlanStore
    planner: Planner
    actions: Actions
    sessions: OrderedDict[str, Session] = field(default_factory=OrderedDict)
    # A stdio process is one session (contract §7): in a store several servers share, its
    # key must be this server's own, never the same "default" as every other stdio server.
    instance: str = field(default_factory=lambda: uuid.uuid4().hex)

    def _stored_key(self, key: str) -> str:
        return f"{PROCESS_SESSION}:{self.instance}" if key == PROCESS_SESSION else key

    def session(self, key: str) -> Session:
        """The session of `key`: the one the current tool call holds, else (a shared
        store) as stored, else this process's own."""
        held = _held.get()
        if held is not None and held[0] == key:
            return held[1]
        if isinstance(self.store, SharedSessions):
            with self.store.edit_session(self._stored_key(key)) as data:  # a read: saved unchanged
                return Session.from_state(data)
        found = self.sessions.get(key)
        if found is None:
            found = self.sessions[key] = Session()
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)
        else:
            self.sessions.move_to_end(key)
        return found

    @asynccontextmanager
    async def session_scope(self, key: str) -> AsyncIterator[Session]:
        """Hold one session for a tool call. With a store that keeps sessions (servers
        sharing a database, each request maybe on another) it is read and locked in the
        store for the call and written back after it, so requests alternating between
        servers see one todo list, current plan and reminder clock."""
        if not isinstance(self.store, SharedSessions):
            yield self.session(key)
            return
        edit = self.store.edit_session(self._stored_key(key))
        data = await anyio.to_thread.run_sync(edit.__enter__)
        session = Session.from_state(data)
        token = _held.set((key, session))
        try:
            yield session
        except BaseException:
            _held.reset(token)
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(edit.__exit__, *sys.exc_info())
            raise
        _held.reset(token)
        data.clear()
        data.update(session.to_state())
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(edit.__exit__, None, None, None)

    def plan_has_work(self, session: Session) -> bool:
        return self.planner.has_work_in_progress(session.current_plan)


def session_key(request: Any) -> str:
    """Contract §7: a stdio process is one session; over HTTP the mcp-session-id
    header, else the authenticated client, else one shared default session."""
    if request is None:
        return PROCESS_SESSION
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
