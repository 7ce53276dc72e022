"""Server state, built once per server object (in build_server) and never global."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from mcp.server.mcpserver import Context

from planning_core import FileStore, Planner, Session
from planning_core.actions import Actions

DEFAULT_SESSION = "default"
MAX_SESSIONS = 1_000  # HTTP clients come and go; the least recently used are forgotten


@dataclass
class AppState:
    store: FileStore
    planner: Planner
    actions: Actions
    sessions: OrderedDict[str, Session] = field(default_factory=OrderedDict)

    def session(self, key: str) -> Session:
        found = self.sessions.get(key)
        if found is None:
            found = self.sessions[key] = Session()
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)
        else:
            self.sessions.move_to_end(key)
        return found

    def plan_has_work(self, session: Session) -> bool:
        return self.planner.has_work_in_progress(session.current_plan)


def session_key(request: Any) -> str:
    """Contract §7: a stdio process is one session; over HTTP the mcp-session-id
    header, else the authenticated client, else one shared default session."""
    if request is None:
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
