"""Who may reach the HTTP endpoints, /mcp and the board alike: loopback by default with
DNS-rebinding protection (Host and Origin must name the served address and port), a bearer
token required for any other address (and on every request once configured), and the socket
both listen on. One module for server/transport/http.py and server/board/, so neither imports
the other's serving code."""

from __future__ import annotations

import hmac
import ipaddress
import os
import socket
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK loads only when serving (the CLI's other commands start fast)
    from mcp.server.transport_security import TransportSecuritySettings

TOKEN_ENV = "PLANNING_MCP_TOKEN"


class ServeError(Exception):
    """A reason the server cannot start, as one line for the person starting it."""


def token_from(arg: str | None) -> str | None:
    """--token, else $PLANNING_MCP_TOKEN; empty means none."""
    return arg or os.environ.get(TOKEN_ENV) or None


def url_host(host: str) -> str:
    """`host` as it appears in a URL or a Host header: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HttpWrapper:
    """ASGI wrapper that acts on HTTP requests (`http`) and passes every other scope (the
    server's lifespan) to the app it wraps unchanged."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Any, receive: Any, send: Any) -> None:
        raise NotImplementedError


class BearerAuth(HttpWrapper):
    """ASGI wrapper: 401 for any HTTP request without `Authorization: Bearer <token>`."""

    def __init__(self, app: Any, token: str) -> None:
        super().__init__(app)
        self.expected = f"Bearer {token}".encode()

    async def http(self, scope: Any, receive: Any, send: Any) -> None:
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


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
DEFAULT_HTTP_PORT = 80  # the one port a client leaves out of Host and Origin


def security_for(host: str, port: int) -> TransportSecuritySettings:
    """Loopback: only the loopback names with the port actually served, compared exactly.

    No `name:*` patterns: the SDK matches those as a prefix (`127.0.0.1:*` accepts
    `127.0.0.1:8123.evil.com` and `127.0.0.1:8123@evil.com`), while plain entries are compared
    exactly."""
    from mcp.server.transport_security import TransportSecuritySettings

    if is_loopback(host):
        # The served address too (e.g. 127.0.0.2, also loopback).
        names = list(dict.fromkeys((*LOOPBACK_NAMES, url_host(host))))
        hosts = [f"{name}:{port}" for name in names]
        if port == DEFAULT_HTTP_PORT:
            hosts += names
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=hosts,
            allowed_origins=[f"http://{h}" for h in hosts],
        )
    # Off loopback the Host header is whatever name clients use; the token guards access.
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


def check_token(host: str, token: str | None) -> None:
    if not is_loopback(host) and not token:
        raise ServeError(
            f"refusing to serve on {host} without a token: pass --token T or set {TOKEN_ENV} (or bind 127.0.0.1)"
        )


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and
    # with proto 0 each answer waited for the client's delayed ACK: 45-48 ms a ping, now 3-6 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        # Listening before the "serving <url>" line is printed: a client that connects as
        # soon as it reads the line is queued, never refused (uvicorn's listen() is later).
        sock.listen(2048)
    except OSError as e:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {e.strerror}; pick another --port") from None
    return sock
