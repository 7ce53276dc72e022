"""HTTP and SSE end to end: `planning-mcp serve` as a child process on a loopback port, on
every store a server child can be given (store_url: files, postgres); a bad root is a
file-store matter and stays on files."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ResourceListChangedNotification

from tests.support.mcp import text_of
from tests.support.procs import HOST, free_port, run_cli
from tests.support.store_urls import serving_store
from tests.support.waits import bound

MODES = ["legacy", "auto"]
TOKEN = "e2e-s3cret-token"
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def short_flow(client: Client, title: str) -> None:
    r = await client.call_tool("PlanCreate", {"title": title, "analysis": "a", "approach": "b"})
    assert not r.is_error, text_of(r)
    plan = r.structured_content["plan"]["name"]
    r = await client.call_tool("TaskCreate", {"subject": f"First step of {title}", "description": "do it"})
    assert not r.is_error, text_of(r)
    assert text_of(r).splitlines()[0] == f"Task #1 created successfully: First step of {title}"
    r = await client.call_tool("TaskList", {"plan": plan})
    assert not r.is_error, text_of(r)
    assert text_of(r).splitlines()[:2] == [f"{plan} [0/1 done]", f"#1 [pending] First step of {title}"]
    assert "# Active Plans" in (client.instructions or "")


def authed(token: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(bound(30), read=bound(60))
    )


async def test_streamable_http_both_modes(store_url: str, tmp_path: Path) -> None:
    with serving_store(tmp_path, "http", store_url) as srv, anyio.fail_after(bound(60)):
        for mode in MODES:
            async with Client(f"{srv.base}/mcp", mode=mode) as client:
                await short_flow(client, f"HTTP {mode}")
        assert "[Session Plan] Active tasks:" in srv.stderr()
        assert f"serving {srv.base}/mcp" in srv.stderr()
        # DNS-rebinding protection is on at the loopback default.
        async with httpx2.AsyncClient(timeout=bound(10)) as raw:
            r = await raw.post(f"{srv.base}/mcp", json=PING, headers={**ACCEPT, "Host": "evil.example"})
            assert r.status_code == 421
            r = await raw.post(f"{srv.base}/mcp", json=PING, headers={**ACCEPT, "Origin": "http://evil.example"})
            assert r.status_code == 403


async def test_sse_both_modes(store_url: str, tmp_path: Path) -> None:
    with serving_store(tmp_path, "sse", store_url) as srv, anyio.fail_after(bound(60)):
        for mode in MODES:
            async with Client(sse_client(f"{srv.base}/sse"), mode=mode) as client:
                await short_flow(client, f"SSE {mode}")


async def test_token_is_required_and_checked(store_url: str, tmp_path: Path) -> None:
    with serving_store(tmp_path, "http", store_url, token=TOKEN) as srv, anyio.fail_after(bound(60)):
        url = f"{srv.base}/mcp"
        async with httpx2.AsyncClient(timeout=bound(10)) as raw:
            assert (await raw.post(url, json=PING, headers=ACCEPT)).status_code == 401
            wrong = {**ACCEPT, "Authorization": "Bearer not-the-token"}
            assert (await raw.post(url, json=PING, headers=wrong)).status_code == 401
            basic = {**ACCEPT, "Authorization": f"Basic {TOKEN}"}
            assert (await raw.post(url, json=PING, headers=basic)).status_code == 401
            assert (await raw.get(url, headers=ACCEPT)).status_code == 401
        for mode in MODES:
            async with authed(TOKEN) as hc, Client(streamable_http_client(url, http_client=hc), mode=mode) as client:
                await short_flow(client, f"Token {mode}")
        with pytest.raises(Exception):  # noqa: B017 - the SDK reports the 401 as an ExceptionGroup
            async with authed("wrong") as hc, Client(streamable_http_client(url, http_client=hc)) as client:
                await client.list_tools()


async def test_token_guards_sse(store_url: str, tmp_path: Path) -> None:
    with serving_store(tmp_path, "sse", store_url, token=TOKEN) as srv, anyio.fail_after(bound(60)):
        async with httpx2.AsyncClient(timeout=bound(10)) as raw:
            assert (await raw.get(f"{srv.base}/sse")).status_code == 401
            assert (await raw.post(f"{srv.base}/messages/?session_id=x", json=PING)).status_code == 401
        headers = {"Authorization": f"Bearer {TOKEN}"}
        listed = anyio.Event()

        async def on_message(message: Any) -> None:
            if isinstance(message, ResourceListChangedNotification):
                listed.set()

        sse = sse_client(f"{srv.base}/sse", headers=headers)
        async with Client(sse, mode="legacy", message_handler=on_message) as client:
            await short_flow(client, "SSE token")
            # The handshake before closing: the watcher's notice of the new plan (the last it
            # sends this client) has arrived; one arriving while the SDK's SSE client closes
            # makes its reader raise BrokenResourceError.
            await listed.wait()


def one_error_line(stderr: str) -> str:
    """A refusal to start is exactly one `planning-mcp: ...` line on stderr (no summary, no traceback)."""
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("planning-mcp: "), stderr
    return lines[0]


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_non_loopback_needs_a_token(transport: str, store_url: str) -> None:
    r = run_cli(
        ["serve", "--transport", transport, "--host", "0.0.0.0", "--port", str(free_port()), "--store", store_url]
    )
    assert r.returncode != 0
    assert "--token" in one_error_line(r.stderr)


def test_port_in_use(store_url: str) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind((HOST, 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r = run_cli(["serve", "--transport", "http", "--port", str(port), "--store", store_url])
    assert r.returncode != 0
    line = one_error_line(r.stderr)
    assert str(port) in line and "--port" in line


@pytest.mark.parametrize(
    "args",
    [
        ["--root", "{bad}"],
        ["serve", "--transport", "http", "--port", "0", "--root", "{bad}"],
        ["serve", "--transport", "sse", "--root", "{bad}"],
        ["status", "--root", "{bad}"],
    ],
    ids=["stdio", "http", "sse", "status"],
)
def test_bad_root_is_refused(args: list[str], tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    bad = str(a_file / ".planning")
    r = run_cli([a.replace("{bad}", bad) for a in args])
    assert r.returncode != 0
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1, r.stderr
    assert "--root" in r.stderr and bad in r.stderr
