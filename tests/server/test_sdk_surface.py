"""The private SDK parts server/mcp/sdk.py reaches, each checked against the installed mcp
SDK: an upgrade that renames, moves or reshapes one fails here, by name, instead of
somewhere in a protocol test. pyproject.toml pins the minor version these ran on."""

from __future__ import annotations

import importlib.metadata
import inspect
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts import Prompt
from mcp.server.mcpserver.tools import Tool

from server.mcp import sdk
from server.mcp.app import build_server
from tests.support.mcp import text_of
from tests.support.procs import REPO


def test_the_installed_sdk_is_the_pinned_minor_version() -> None:
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    pin = next(d for d in deps if re.match(r"mcp\b", d))
    assert pin == "mcp>=2.3,<2.4", pin
    assert importlib.metadata.version("mcp").startswith("2.3."), importlib.metadata.version("mcp")


def test_the_lowlevel_server_takes_handlers_and_runs_on_any_streams(root: Path) -> None:
    server = build_server(root)
    low = sdk.lowlevel(server)
    assert isinstance(low, Server)
    assert list(inspect.signature(low.add_request_handler).parameters)[:3] == ["method", "params_type", "handler"]
    assert list(inspect.signature(low.run).parameters)[:3] == ["read_stream", "write_stream", "initialization_options"]
    assert callable(low.create_initialization_options)
    assert isinstance(low.middleware, list)
    assert isinstance(low.extensions, dict)


def test_registered_tools_are_the_ones_listed_and_their_output_schema_is_shared(root: Path) -> None:
    server = build_server(root)
    tools = sdk.registered_tools(server)
    assert tools and all(isinstance(t, Tool) for t in tools)
    for tool in tools:
        assert isinstance(tool.parameters, dict) and isinstance(tool.description, str), tool.name
        # tools/list publishes `output_schema`, which is the metadata's dict itself: the
        # in-place edit of replace_output_schema relies on that.
        assert tool.output_schema is tool.fn_metadata.output_schema, tool.name
        assert sdk.find_tool(server, tool.name) is tool
    assert sdk.find_tool(server, "NoSuchTool") is None


async def test_a_replaced_output_schema_is_what_clients_get(root: Path) -> None:
    server = build_server(root)
    tool = sdk.find_tool(server, "PlanList")
    assert tool is not None and tool.output_schema is not None
    schema = {**tool.output_schema, "description": "replaced"}
    sdk.replace_output_schema(tool, schema)
    async with Client(server) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert listed["PlanList"].output_schema == schema
    assert "title" not in str(listed["TaskList"].output_schema)  # the compaction at start took effect too


async def test_prompts_are_found_by_name_and_answered_by_the_sdk(root: Path) -> None:
    server = build_server(root)
    prompt = sdk.find_prompt(server, "plan-mode")
    assert isinstance(prompt, Prompt) and [a.name for a in prompt.arguments or []] == ["task"]
    assert sdk.find_prompt(server, "nope") is None
    assert "plan-mode" in sdk.prompt_names(server)
    handle = server._handle_get_prompt
    assert inspect.iscoroutinefunction(handle) and list(inspect.signature(handle).parameters) == ["ctx", "params"]
    async with Client(server) as client:
        got = await client.get_prompt("plan-mode", {"task": "add auth"})
    assert "add auth" in str(got.messages)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_request_knows_its_connection(mode: str) -> None:
    seen: list[Connection | None] = []

    async def record(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/list":
            seen.append(sdk.connection_of(ctx))
        return await call_next(ctx)

    server: MCPServer[Any] = MCPServer("probe", middleware=[record])
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        await client.list_tools()
        await client.list_tools()
    assert len(seen) == 2 and all(isinstance(c, Connection) for c in seen)
    if mode == "legacy":
        assert seen[0] is seen[1]  # a 2025 client's connection lasts: notify.py keeps its subscriptions on it


async def test_the_sdk_text_for_malformed_arguments_is_parsed() -> None:
    server: MCPServer[Any] = MCPServer("probe")

    @server.tool()
    def pick(n: int, name: str) -> str:
        return f"{n} {name}"

    async with Client(server) as client:
        result = await client.call_tool("pick", {"n": "x", "name": 3})
    assert result.is_error
    text = text_of(result)
    errors = sdk.argument_errors(text)
    assert errors is not None, text
    assert [field for field, _ in errors] == ["n", "name"]
    assert errors[0][1].startswith("Input should be a valid integer") and "input_type=str]" in errors[0][1]
    assert sdk.argument_errors("Error executing tool pick: something else") is None
