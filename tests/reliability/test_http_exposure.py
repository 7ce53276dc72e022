"""Promise: over HTTP the server is not reachable from a foreign site or host, not
served off loopback without a token, not usable without the token, and refuses
oversized bodies. Real uvicorn on 127.0.0.1 free ports; the Host and Origin checks
against `planning-mcp serve` children, for both HTTP transports."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from server.common.exposure import ServeError
from server.mcp.app import build_server
from server.transport.http import MAX_REQUEST_BYTES, build_app
from tests.support.procs import Served, child_env, console_script, serving, stop
from tests.support.waits import bound

REPO = Path(__file__).resolve().parents[2]
TOKEN = "s3cret-token"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@contextlib.asynccontextmanager
async def serve(app_for_port: Callable[[int], object]) -> AsyncIterator[str]:
    """Bind first, then build the app for the port bound (as `planning-mcp serve` does)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = app_for_port(port)
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    with anyio.fail_after(bound(60)):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: srv.serve(sockets=[sock]))
            while not srv.started:
                await anyio.sleep(0.02)
            try:
                yield f"http://127.0.0.1:{port}/mcp"
            finally:
                srv.should_exit = True


def app_for(tmp_path: Path, token: str | None = None) -> Callable[[int], object]:
    return lambda port: build_app(build_server(tmp_path / "root"), "http", "127.0.0.1", port, token)


async def post(url: str, body: bytes | None = None, **headers: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(bound(20))) as hc:
        return await hc.post(
            url, content=body if body is not None else json.dumps(INIT).encode(), headers={**HEADERS, **headers}
        )


async def test_foreign_host_header_is_refused(tmp_path: Path) -> None:
    async with serve(app_for(tmp_path)) as url:
        assert (await post(url, Host="evil.example:80")).status_code == 421
        assert (await post(url)).status_code == 200  # the same request from loopback works


async def test_foreign_origin_is_refused(tmp_path: Path) -> None:
    async with serve(app_for(tmp_path)) as url:
        assert (await post(url, Origin="https://evil.example")).status_code == 403
        port = url.split(":")[2].split("/")[0]
        assert (await post(url, Origin=f"http://localhost:{port}")).status_code == 200


def test_non_loopback_bind_without_token_refuses_to_start(tmp_path: Path) -> None:
    with pytest.raises(ServeError, match="token"):
        build_app(build_server(tmp_path / "root"), "http", "0.0.0.0", 8123, None)
    env_free = {k: v for k, v in __import__("os").environ.items() if k != "PLANNING_MCP_TOKEN"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "server",
            "serve",
            "--transport",
            "http",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--root",
            str(tmp_path / "root"),
        ],
        cwd=REPO,
        env=env_free,
        capture_output=True,
        text=True,
        timeout=bound(60),
    )
    assert proc.returncode != 0
    assert "token" in proc.stderr and "serving" not in proc.stderr, proc.stderr


async def test_missing_or_wrong_token_is_401(tmp_path: Path) -> None:
    async with serve(app_for(tmp_path, TOKEN)) as url:
        assert (await post(url)).status_code == 401
        assert (await post(url, Authorization="Bearer wrong")).status_code == 401
        assert (await post(url, Authorization=TOKEN)).status_code == 401  # no "Bearer "
        assert (await post(url, Authorization=f"Bearer {TOKEN}")).status_code == 200
        auth = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx2.AsyncClient(headers=auth, timeout=bound(20)) as hc,
            Client(streamable_http_client(url, http_client=hc)) as c,
        ):
            r = await c.call_tool("PlanList", {})
            assert not r.is_error


async def test_oversized_body_is_refused(tmp_path: Path) -> None:
    big = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "TaskCreate",
                "arguments": {"subject": "x", "description": "d" * (MAX_REQUEST_BYTES + 1024)},
            },
        }
    )
    async with serve(app_for(tmp_path)) as url:
        r = await post(url, big.encode())
        assert r.status_code == 413, (r.status_code, r.text[:200])
        assert (await post(url)).status_code == 200  # and keeps serving
    todo = tmp_path / "root" / "todo"
    assert not todo.exists() or not any(todo.iterdir())  # nothing written


# A host (or origin) that starts like ours: the SDK's `127.0.0.1:*` pattern is a prefix match.
EVIL_HOSTS = [
    "127.0.0.1:{port}.evil.com",
    "127.0.0.1:{port}@evil.com",
    "localhost:{port}.evil.com",
    "127.0.0.1:{other}",
    "127.0.0.1",
    "evil.example:{port}",
]
EVIL_ORIGINS = [
    "http://127.0.0.1:{port}.evil.com",
    "http://localhost:{port}@evil.com",
    "http://127.0.0.1:{other}",
    "https://127.0.0.1:{port}",
    "http://evil.example",
]
GOOD_HOSTS = ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}"]
GOOD_ORIGINS = ["http://127.0.0.1:{port}", "http://localhost:{port}", "http://[::1]:{port}"]


def fill(patterns: list[str], srv: Served) -> list[str]:
    return [p.format(port=srv.port, other=srv.port + 1 if srv.port < 65535 else srv.port - 1) for p in patterns]


def status(srv: Served, transport: str, **headers: str) -> int:
    """The HTTP status a first request gets: an initialize POST (http) or opening the
    event stream (sse, whose stream is then closed without reading on)."""
    with httpx2.Client(timeout=bound(20)) as hc:
        if transport == "http":
            answer = hc.post(f"{srv.base}/mcp", content=json.dumps(INIT).encode(), headers={**HEADERS, **headers})
            return answer.status_code
        with hc.stream("GET", f"{srv.base}/sse", headers=headers) as r:
            return r.status_code


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_only_the_served_host_and_port_are_accepted(transport: str, tmp_path: Path) -> None:
    with serving(tmp_path, transport) as srv:
        for host in fill(EVIL_HOSTS, srv):
            assert status(srv, transport, Host=host) == 421, host
        for origin in fill(EVIL_ORIGINS, srv):
            assert status(srv, transport, Origin=origin) == 403, origin
        for host in fill(GOOD_HOSTS, srv):
            assert status(srv, transport, Host=host) == 200, host
        for origin in fill(GOOD_ORIGINS, srv):
            assert status(srv, transport, Origin=origin) == 200, origin


def test_sse_messages_endpoint_checks_the_host_too(tmp_path: Path) -> None:
    session = "0" * 32  # no such session: a request that passes the checks is answered 404
    with serving(tmp_path, "sse") as srv, httpx2.Client(timeout=bound(20)) as hc:
        url = f"{srv.base}/messages/?session_id={session}"
        for host in fill(EVIL_HOSTS, srv):
            assert hc.post(url, json=INIT, headers={"Host": host}).status_code == 421, host
        for origin in fill(EVIL_ORIGINS, srv):
            assert hc.post(url, json=INIT, headers={"Origin": origin}).status_code == 403, origin
        assert hc.post(url, json=INIT, headers={"Host": f"localhost:{srv.port}"}).status_code == 404


def test_port_zero_checks_the_port_actually_bound(tmp_path: Path) -> None:
    """`--port 0` lets the system pick; the Host check must name the port picked, not 0."""
    err = tmp_path / "serve.stderr"
    args = [console_script(), "serve", "--transport", "http", "--port", "0", "--root", str(tmp_path / "root")]
    with err.open("wb") as sink:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink, env=child_env())
    try:
        deadline = time.monotonic() + bound(30)
        while not (found := re.search(r"serving http://127\.0\.0\.1:(\d+)/mcp", err.read_text())):
            assert proc.poll() is None and time.monotonic() < deadline, err.read_text()
            time.sleep(0.05)
        srv = Served(proc, int(found.group(1)), err)
        assert status(srv, "http") == 200
        assert status(srv, "http", Host=f"localhost:{srv.port}") == 200
        assert status(srv, "http", Host="127.0.0.1:0") == 421
    finally:
        stop(proc)
