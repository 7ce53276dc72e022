"""The board over HTTP: the page, its JSON, its live events, and (when allowed) actions.

Exposure is the MCP endpoint's (server/common/exposure.py): the strict Host/Origin allow-list that
security_for builds (DNS-rebinding protection on loopback), and, when a token is set, no
answer without it. A browser cannot add a bearer header to a page load, so the page also
takes the token once as `?token=`, answers with an HttpOnly SameSite=Strict cookie scoped
to the board's path (a value derived from the token, which does not open /mcp) and
redirects to the same address without it (out of the address bar and Referer headers); the JSON,
the events and the actions then go by the cookie or the header.

Live: one follower of the store's change feed per site (server/common/changes.py) and one build
of each shown board per change, shared by every page that streams it (live.py). A stream
is counted when it is admitted, before its response starts, and given back when it ends
or its client goes, so MAX_STREAMS holds for a burst of simultaneous requests too."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse

from planning_core import PlanningError, Session
from planning_core.actions import Actions, Outcome
from planning_core.caller import NOBODY, Caller
from planning_core.store import PlanStore
from planning_core.taskgraph.graph import utc_now

from ..common.changes import ChangeCounter
from ..common.exposure import security_for
from .data import board_data, shown_board
from .live import LiveBoards
from .page import ACTIONS, APPROVE, render_page

BASE = "/board"
COOKIE = "planning_board_token"
MAX_STREAMS = 64  # open pages at once; more are told to come back (503), never queued
MAX_ACTION_BYTES = 16 * 1024
ACTIONS_OFF = "Actions are off on this board (read-only); start it with `planning-mcp web --actions` to allow them."
# The page's own policy, also as a header: nothing from elsewhere, no framing (clickjacking).
PAGE_HEADERS = {
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
}


@dataclass
class BoardSite:
    """The board's routes for one store, as served on `host:port` (the port as bound)."""

    store: PlanStore
    host: str
    port: int
    token: str | None = None
    actions: Actions | None = None  # None: read-only
    # Who the page's actions are by: the command that serves it (cli_common.command_caller).
    caller: Caller = field(default_factory=lambda: Caller(NOBODY, Session()))
    streams: int = 0  # admitted and not yet ended
    # Whether the server is shutting down (uvicorn's should_exit): an event stream never ends
    # by itself, and uvicorn waits for every open response before it exits, so Ctrl+C would
    # hang while a board is open. Each stream ends within live.POLL_INTERVAL once this is true.
    stopping: Callable[[], bool] = lambda: False
    changes: ChangeCounter = field(init=False)
    live: LiveBoards = field(init=False)
    reads: Actions = field(init=False)  # what the page shows, read through the core

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        response = await self.respond(request)
        await response(scope, receive, send)

    def __post_init__(self) -> None:
        self.reads = self.actions if self.actions is not None else Actions.over(self.store)
        self.changes = ChangeCounter(self.store)
        self.live = LiveBoards(self.live_board, self.changes, lambda: self.stopping())
        from mcp.server.transport_security import TransportSecurityMiddleware

        # Built once: the allow-list depends only on the served host and port, and every
        # request (each page's event stream included) is checked against it.
        self._security = TransportSecurityMiddleware(security_for(self.host, self.port))

    async def respond(self, request: Request) -> Response:
        post = request.method == "POST"
        refused = await self._security.validate_request(request, is_post=post)
        if refused is not None:
            return refused
        path = request.url.path.rstrip("/") or "/"
        if path == "/":  # `planning-mcp web` alone on its port: the address people type
            query = f"?{request.url.query}" if request.url.query else ""
            return RedirectResponse(BASE + query, status_code=307)
        if path == BASE and request.method == "GET" and self.token and "token" in request.query_params:
            return self.login(request)
        if not self.authorized(request):
            return PlainTextResponse(
                f"this board needs the server's token: open {BASE}?token=YOUR_TOKEN once "
                "(or send Authorization: Bearer YOUR_TOKEN)\n",
                status_code=401,
                headers={"www-authenticate": "Bearer"},
            )
        return await self._route(request, path, post)

    async def _route(self, request: Request, path: str, post: bool) -> Response:
        """An authorized request's answer."""
        get = request.method == "GET"
        if path == BASE and get:
            return Response(render_page("web", BASE), media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)
        if path == f"{BASE}/api/board" and get:
            data = await anyio.to_thread.run_sync(self.board, request.query_params.get("plan"))
            return Response(data, media_type="application/json", headers={"cache-control": "no-store"})
        if path == f"{BASE}/events" and get:
            return self.events(request.query_params.get("plan"))
        if path == f"{BASE}/api/action" and post:
            return await self.action(request)
        return PlainTextResponse("not found\n", status_code=404)

    # -- access ---------------------------------------------------------------------

    def authorized(self, request: Request) -> bool:
        if not self.token:
            return True
        header = request.headers.get("authorization", "").encode()
        cookie = request.cookies.get(COOKIE, "").encode()
        return hmac.compare_digest(header, b"Bearer " + self.token.encode()) or hmac.compare_digest(
            cookie, self.cookie_value().encode()
        )

    def cookie_value(self) -> str:
        """Derived from the token, not the token: cookie-safe characters, and a cookie that
        leaks opens the board only, never /mcp (which takes the token itself)."""
        assert self.token
        return hmac.new(self.token.encode(), b"planning-mcp board cookie", hashlib.sha256).hexdigest()

    def login(self, request: Request) -> Response:
        given = request.query_params.get("token", "").encode()
        assert self.token
        if not hmac.compare_digest(given, self.token.encode()):
            return PlainTextResponse("wrong token for this board\n", status_code=401)
        rest = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "token"])
        target = BASE + (f"?{rest}" if rest else "")
        response = RedirectResponse(target, status_code=303, headers={"referrer-policy": "no-referrer"})
        response.set_cookie(COOKIE, self.cookie_value(), path=BASE, httponly=True, samesite="strict")
        return response

    # -- data -----------------------------------------------------------------------

    def board(self, plan: str | None) -> str:
        return _board_json(board_data(self.reads, plan, actions=self.actions is not None))

    def live_board(self, plan: str | None) -> tuple[str, float | None]:
        """The board, and in how many seconds it changes with no write (a lease runs out)."""
        data, lapse = shown_board(self.reads, plan, actions=self.actions is not None)
        return _board_json(data), None if lapse is None else (lapse - utc_now()).total_seconds()

    def events(self, plan: str | None) -> Response:
        if self.streams >= MAX_STREAMS:
            return PlainTextResponse(f"too many open boards ({MAX_STREAMS}); close one\n", status_code=503)
        self.streams += 1  # now, not when the stream first runs: a burst would all pass the check
        return _Stream(
            self.live.stream(plan),
            self._release,
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    def _release(self) -> None:
        self.streams -= 1

    # -- actions: TaskUpdate through Actions, as the agent's tool calls it ----------------

    async def action(self, request: Request) -> Response:
        if self.actions is None:
            return _refusal(ACTIONS_OFF, 403)
        # Only this page may act: a browser names the page's origin on every POST; another
        # site's (or a missing) Origin is refused, off loopback too, where Host is not checked.
        if request.headers.get("origin") != f"http://{request.headers.get('host', '')}":
            return _refusal("actions are taken from the board's own page only", 403)
        body = _action_body(await request.body())
        if isinstance(body, Response):
            return body
        plan, task_id, owner = body.get("plan"), body.get("taskId"), str(body.get("owner") or "").strip()
        if not isinstance(plan, str) or not plan or isinstance(task_id, bool) or not isinstance(task_id, int | str):
            return _refusal("plan (a name) and taskId (a number) are required", 400)
        if body["action"] == APPROVE:  # a person's approval of a gated task, not an agent's TaskUpdate
            return await self._answer(lambda actions: actions.approve(self.caller, task_id, plan))
        edits: dict[str, Any] = dict(ACTIONS[body["action"]])  # TaskUpdate's keywords (status, owner)
        if "owner" in edits or (owner and body["action"] == "start"):
            if not owner:
                return _refusal("type your name to claim a task", 400)
            edits["owner"] = owner
        return await self._answer(lambda actions: actions.task_update(self.caller, task_id, plan, **edits))

    async def _answer(self, call: Callable[[Actions], Outcome[Any]]) -> Response:
        actions = self.actions
        assert actions is not None
        try:
            outcome = await anyio.to_thread.run_sync(lambda: call(actions))
        except PlanningError as e:
            return _refusal(str(e), 409)
        return JSONResponse({"refused": False, "message": outcome.text})


def _action_body(raw: bytes) -> dict[str, Any] | Response:
    """The action a POST asks for (a JSON object naming a known action), else its refusal."""
    if len(raw) > MAX_ACTION_BYTES:
        return _refusal("request too large", 413)
    try:
        body = json.loads(raw)
    except ValueError:
        return _refusal("the body must be JSON: {action, plan, taskId, owner}", 400)
    if not isinstance(body, dict) or body.get("action") not in (*ACTIONS, APPROVE):
        return _refusal(f"action must be one of {', '.join((*ACTIONS, APPROVE))}", 400)
    return body


class _Stream(StreamingResponse):
    """A streaming response that gives its place back however it ends: finished, failed,
    or cancelled when its client went (before its body began, too)."""

    def __init__(self, body: Any, release: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(body, **kwargs)
        self._release = release

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


def _board_json(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _refusal(message: str, status: int) -> JSONResponse:
    return JSONResponse({"refused": True, "message": message}, status_code=status)


class WithBoard:
    """ASGI: requests under /board go to the board, everything else (and the lifespan)
    to `app` (the MCP endpoint with its own checks)."""

    def __init__(self, board: BoardSite, app: Any) -> None:
        self.board = board
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == BASE or path.startswith(BASE + "/"):
            await self.board(scope, receive, send)
        else:
            await self.app(scope, receive, send)
