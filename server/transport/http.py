"""HTTP and SSE: served under the exposure rules (server/common/exposure.py: loopback by default
with DNS-rebinding protection, a bearer token required for any other address); streamable
HTTP streams are resumable (server/transport/eventstore.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from ..common.exposure import BearerAuth, HttpWrapper, bind, check_token, security_for, url_host

if TYPE_CHECKING:  # the SDK loads only when serving (the CLI's other commands start fast)
    from mcp.server.mcpserver import MCPServer

MAX_REQUEST_BYTES = 4 * 1024 * 1024
RECONNECT_AFTER_MS = 1000  # what an SSE client is told to wait before resuming a dropped stream
Transport = Literal["http", "sse"]

FINAL_BODY = {"type": "http.response.body", "body": b"", "more_body": False}


class WholeResponses(HttpWrapper):
    """ASGI wrapper: each HTTP response is started once and always completed. The SDK's SSE
    endpoint (mcp 2.3.0, python-sdk #883) sends a second http.response.start after its stream,
    and a stream ended by shutdown has no final body: uvicorn logged a RuntimeError traceback
    (SSE) or "returned without completing response" (an HTTP GET stream) on every Ctrl+C."""

    async def http(self, scope: Any, receive: Any, send: Any) -> None:
        started = done = False

        async def once(message: Any) -> None:
            nonlocal started, done
            if done:
                return
            if message["type"] == "http.response.start":
                if started:  # the second start: end the first response instead
                    done = True
                    await send(FINAL_BODY)
                    return
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                done = True
            await send(message)

        await self.app(scope, receive, once)
        if started and not done:
            await send(FINAL_BODY)


def build_app(server: MCPServer[Any], transport: Transport, host: str, port: int, token: str | None) -> Any:
    """The ASGI app for `host:port`, the port as bound (the Host and Origin checks name it)."""
    check_token(host, token)
    security = security_for(host, port)
    app: Any
    if transport == "http":
        from .eventstore import BoundedEventStore, SessionScope

        app = SessionScope(
            server.streamable_http_app(
                transport_security=security,
                max_request_body_size=MAX_REQUEST_BYTES,
                event_store=BoundedEventStore(),
                # With a retry interval the SDK sends `retry:` in its priming event, so a client
                # whose stream drops knows when to reconnect with Last-Event-ID (SSE polling).
                retry_interval=RECONNECT_AFTER_MS,
            )
        )
    else:
        app = server.sse_app(transport_security=security, max_request_body_size=MAX_REQUEST_BYTES)
    app = WholeResponses(app)
    app = BearerAuth(app, token) if token else app
    if transport != "http":
        return app
    # The board beside /mcp on the same port, under the same Host/Origin and token rules (read-only).
    from ..board.routes import BoardSite, WithBoard
    from ..mcp.board_app import state_of

    return WithBoard(BoardSite(state_of(server).store, host, port, token), app)


def serve(
    server: MCPServer[Any],
    transport: Transport,
    host: str,
    port: int,
    token: str | None,
    banner: str = "",
    ready: Callable[[str], str] = lambda url: f"planning-mcp: serving {url}",
) -> None:
    """`banner` (the startup summary) and the `ready` line (given the served URL, known only
    once the port is bound) are printed only then, so a refusal to start (no token off
    loopback, port in use) is the one line on stderr."""
    import uvicorn

    check_token(host, token)  # before binding: a refusal must not hold the port even briefly
    sock = bind(host, port)
    bound = int(sock.getsockname()[1])  # --port 0 picks one; the Host/Origin checks need the real one
    app = build_app(server, transport, host, bound, token)
    if banner:
        print(banner, file=sys.stderr, flush=True)
    path = "/mcp" if transport == "http" else "/sse"
    base = f"http://{url_host(host)}:{bound}"  # `--host ::1` is http://[::1]:PORT
    print(ready(f"{base}{path}"), file=sys.stderr, flush=True)
    if transport == "http":
        print(f"planning-mcp: the board is at {base}/board", file=sys.stderr, flush=True)
    server_ = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    if hasattr(app, "board"):  # open board pages end their event streams when we stop (board/routes.py)
        app.board.stopping = lambda: server_.should_exit
    server_.run(sockets=[sock])
