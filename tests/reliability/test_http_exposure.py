"""Promise: over HTTP the server is not reachable from a foreign site or host, not
served off loopback without a token, not usable without the token, and refuses
oversized bodies. Real uvicorn on 127.0.0.1 free ports."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from server.app import build_server
from server.http import MAX_REQUEST_BYTES, ServeError, build_app

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
async def serve(app: object) -> AsyncIterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: srv.serve(sockets=[sock]))
            while not srv.started:
                await anyio.sleep(0.02)
            try:
                yield f"http://127.0.0.1:{port}/mcp"
            finally:
                srv.should_exit = True


def app_for(tmp_path: Path, token: str | None = None) -> object:
    return build_app(build_server(tmp_path / "root"), "http", "127.0.0.1", token)


async def post(url: str, body: bytes | None = None, **headers: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(20)) as hc:
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
        build_app(build_server(tmp_path / "root"), "http", "0.0.0.0", None)
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
        timeout=60,
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
            httpx2.AsyncClient(headers=auth, timeout=20) as hc,
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
    assert not any((tmp_path / "root" / "todo").iterdir())
