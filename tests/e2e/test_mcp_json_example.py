"""mcp.json.example: every snippet starts a working server exactly the way it says."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.support.procs import REPO, child_env, console_script, free_port, stop, wait_for_port
from tests.support.waits import bound

EXAMPLE = REPO / "mcp.json.example"
ROOT_PLACEHOLDER = "/ABSOLUTE/PATH/.planning"
TOKEN = "example-token-123"
TOOLS = {"PlanCreate", "PlanList", "PlanArchive", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "todo"}


def entries() -> dict[str, Any]:
    data = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and data
    return data


def the_server(snippet: dict[str, Any]) -> dict[str, Any]:
    """Each snippet configures exactly one server, under the key its client reads."""
    (container,) = snippet.values()
    (cfg,) = container.values()
    return dict(cfg)


def stdio_keys() -> list[str]:
    return [k for k, v in entries().items() if "url" not in the_server(v)]


def http_keys() -> list[str]:
    return [k for k, v in entries().items() if "url" in the_server(v)]


def test_example_covers_the_clients() -> None:
    data = entries()
    keys = " ".join(data)
    for client in ("Claude Desktop", "Claude Code", "Cursor", "VS Code", "HTTP"):
        assert client in keys
    for key, snippet in data.items():
        wrapper = "servers" if key.startswith("VS Code") else "mcpServers"
        assert list(snippet) == [wrapper], key
    desktop = next(v for k, v in data.items() if k.startswith("Claude Desktop"))
    assert desktop == {"mcpServers": {"planning": {"command": "planning-mcp", "args": ["--root", ROOT_PLACEHOLDER]}}}
    vscode = next(v for k, v in data.items() if k.startswith("VS Code"))
    assert the_server(vscode)["type"] == "stdio"
    assert len(stdio_keys()) == 4 and len(http_keys()) == 1


@pytest.mark.parametrize("key", stdio_keys())
async def test_stdio_snippet_starts_the_server(key: str, tmp_path: Path) -> None:
    cfg = the_server(entries()[key])
    assert cfg.get("type", "stdio") == "stdio"
    assert cfg["command"] == "planning-mcp"
    args = [
        a.replace(ROOT_PLACEHOLDER, str(tmp_path / "planning")).replace("${workspaceFolder}", str(tmp_path))
        for a in cfg.get("args", [])
    ]
    # Without --root the server uses ./.planning in the folder the client starts it in.
    root = Path(args[args.index("--root") + 1]) if "--root" in args else tmp_path / ".planning"
    env = {k: v for k, v in child_env(cfg.get("env") or {}).items() if k != "PLANNING_MCP_ROOT"}
    params = StdioServerParameters(command=console_script(), args=args, env=env, cwd=str(tmp_path))
    with anyio.fail_after(bound(30)):
        async with Client(params) as client:
            assert {t.name for t in (await client.list_tools()).tools} >= TOOLS
            r = await client.call_tool("PlanCreate", {"title": "From the example", "analysis": "a", "approach": "b"})
            assert not r.is_error
    assert len(list((root / "todo").iterdir())) == 1


@pytest.mark.parametrize("key", http_keys())
async def test_http_snippet_connects(key: str, tmp_path: Path) -> None:
    cfg = the_server(entries()[key])
    assert cfg["type"] == "http"
    assert cfg["url"] == "http://127.0.0.1:8000/mcp"
    # The key says how to start the server; start it that way (on a free port, a temp root, a real token).
    match = re.search(r"run, with the token in PLANNING_MCP_TOKEN: (planning-mcp serve [^)]*)\)", key)
    assert match, key
    port = free_port()
    argv = [a.replace(ROOT_PLACEHOLDER, str(tmp_path / "planning")) for a in shlex.split(match.group(1))]
    assert "--token" not in argv  # the option reads PLANNING_MCP_TOKEN; `--token $UNSET` would break the command
    argv[0] = console_script()
    argv[argv.index("--port") + 1] = str(port)
    headers = {k: v.replace("${PLANNING_MCP_TOKEN}", TOKEN) for k, v in cfg["headers"].items()}
    url = cfg["url"].replace(":8000/", f":{port}/")
    err = tmp_path / "serve.stderr"
    with err.open("wb") as f:
        env = child_env({"PLANNING_MCP_TOKEN": TOKEN})
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=f, env=env)
    try:
        wait_for_port(proc, port, err)
        with anyio.fail_after(bound(30)):
            async with httpx2.AsyncClient(timeout=bound(10)) as raw:
                r = await raw.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
                assert r.status_code == 401  # the token in the command is enforced
            async with (
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(bound(30), read=bound(60))) as hc,
                Client(streamable_http_client(url, http_client=hc)) as client,
            ):
                assert {t.name for t in (await client.list_tools()).tools} >= TOOLS
    finally:
        stop(proc)
