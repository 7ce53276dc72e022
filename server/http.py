"""HTTP and SSE: loopback by default with DNS-rebinding protection, a bearer token
required for any other address (and on every request once configured)."""

from __future__ import annotations

import hmac
import ipaddress
import socket
import sys
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the SDK loads only when serving (the CLI's other commands start fast)
    from mcp.server.mcpserver import MCPServer
    from mcp.server.transport_security import TransportSecuritySettings

MAX_REQUEST_BYTES = 4 * 1024 * 1024
Transport = Literal["http", "sse"]


class ServeError(Exception):
    """A reason the server cannot start, as one line for the person starting it."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class BearerAuth:
    """ASGI wrapper: 401 for any HTTP request without `Authorization: Bearer <token>`."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": b"missing or wrong bearer token\n"})
                return
        await self.app(scope, receive, send)


def security_for(host: str) -> TransportSecuritySettings:
    from mcp.server.transport_security import TransportSecuritySettings

    if is_loopback(host):
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    # Off loopback the Host header is whatever name clients use; the token guards access.
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


def build_app(server: MCPServer[Any], transport: Transport, host: str, token: str | None) -> Any:
    if not is_loopback(host) and not token:
        raise ServeError(
            f"refusing to serve on {host} without a token: pass --token T or set PLANNING_MCP_TOKEN "
            "(or bind 127.0.0.1)"
        )
    security = security_for(host)
    if transport == "http":
        app = server.streamable_http_app(transport_security=security, max_request_body_size=MAX_REQUEST_BYTES)
    else:
        app = server.sse_app(transport_security=security, max_request_body_size=MAX_REQUEST_BYTES)
    return BearerAuth(app, token) if token else app


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {e.strerror}; pick another --port") from None
    return sock


def serve(
    server: MCPServer[Any], transport: Transport, host: str, port: int, token: str | None, banner: str = ""
) -> None:
    """`banner` (the startup summary) is printed only once the address is bound, so a refusal
    to start (no token off loopback, port in use) is the one line on stderr."""
    import uvicorn

    app = build_app(server, transport, host, token)
    sock = bind(host, port)
    if banner:
        print(banner, file=sys.stderr, flush=True)
    path = "/mcp" if transport == "http" else "/sse"
    print(f"planning-mcp: serving http://{host}:{sock.getsockname()[1]}{path}", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
