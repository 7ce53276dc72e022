"""Every private part of the mcp SDK this server relies on, in one place.

The SDK's high-level MCPServer does not offer everything the contract needs: a handler
for a method it already answers (resources/list with our plans, prompts/get with
invalid-params refusals, resources/subscribe for 2025 clients), the low-level server
for our own stdio transport, the registered tools (to compact their schemas), the
client's connection behind a request, and the validation errors of a tool's arguments
(only as text). Each is reached here and nowhere else; tests/server/test_sdk_surface.py
fails when an SDK upgrade changes one, and pyproject.toml pins the SDK to the minor
version those tests ran against. Each is worth a public API upstream.
"""

from __future__ import annotations

import inspect
import itertools
import re
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts import Prompt
from mcp.server.mcpserver.tools import Tool
from pydantic import BaseModel

Handler = Callable[[ServerRequestContext[Any, Any], Any], Awaitable[Any]]


def lowlevel(server: MCPServer[Any]) -> Server[Any]:
    """The low-level server under MCPServer: it takes any pair of streams (our stdio
    transport) and any request handler."""
    return server._lowlevel_server


def add_request_handler(server: MCPServer[Any], method: str, params: type[BaseModel], handler: Handler) -> None:
    """Answer `method` with `handler`, replacing the SDK's own answer if it has one."""
    lowlevel(server).add_request_handler(method, params, handler)


def registered_tools(server: MCPServer[Any]) -> list[Tool]:
    """The tools as registered, whose schemas tools/list sends as they are now."""
    return server._tool_manager.list_tools()


def set_parameters(fn: Callable[..., Any], parameters: list[inspect.Parameter]) -> None:
    """Give a tool's function the parameters the SDK makes its input schema and argument model
    of (it reads `inspect.signature`, which honours `__signature__`), beside its context
    parameter and its return annotation. The function takes them as `**kwargs`."""
    sig = inspect.signature(fn)
    kept = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    fn.__signature__ = sig.replace(parameters=[*kept, *parameters])  # type: ignore[attr-defined]


def find_tool(server: MCPServer[Any], name: str) -> Tool | None:
    return server._tool_manager.get_tool(name)


def replace_output_schema(tool: Tool, schema: dict[str, Any]) -> None:
    """Change the output schema tools/list publishes for `tool`. The SDK keeps it on the
    tool's function metadata, which also decides whether results are checked against
    it; edited in place so every holder of that dict sees the new one."""
    output = tool.fn_metadata.output_schema
    if output is None:
        raise ValueError(f"tool {tool.name} has no output schema to replace")
    output.clear()
    output.update(schema)


def trust_structured_output(tool: Tool) -> None:
    """Stop the SDK from validating each result of `tool` against its output model. Ours
    are dumped from those very models (planning_core.outcomes), so the check could never
    fail, yet it rebuilt every row of a 1,000-task TaskList (about 2 ms a call). The
    schema stays published, and clients still check results against it."""
    tool.fn_metadata.output_model = None


def find_prompt(server: MCPServer[Any], name: str) -> Prompt | None:
    return server._prompt_manager.get_prompt(name)


def prompt_names(server: MCPServer[Any]) -> list[str]:
    return [p.name for p in server._prompt_manager.list_prompts()]


async def sdk_get_prompt(server: MCPServer[Any], ctx: ServerRequestContext[Any, Any], params: Any) -> Any:
    """The SDK's own prompts/get answer, for a handler that checks the request first."""
    return await server._handle_get_prompt(ctx, params)


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Connection | None:
    """The SDK's per-client connection behind this request. The SDK hands handlers only
    the per-request `ServerSession`, which holds it privately."""
    connection = getattr(ctx.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


# The SDK reports arguments that fail a tool's input schema only as text: its ToolError
# message, "Error executing tool <name>: " + str(pydantic.ValidationError).
_ARGUMENT_ERRORS = re.compile(r"^Error executing tool (\S+): \d+ validation errors? for \S+\n")


def argument_errors(text: str) -> list[tuple[str, str]] | None:
    """The (field, detail) line pairs of the SDK's text for a tool's malformed arguments,
    e.g. ("taskId.int", "Input should be a valid integer [type=int_type, ...]"); None if
    `text` is not that text."""
    if not _ARGUMENT_ERRORS.match(text):
        return None
    lines = text.splitlines()[1:]
    pairs = []
    for field, detail in itertools.pairwise(lines):
        if not field.startswith(" ") and detail.startswith("  ") and not detail.startswith("    "):
            pairs.append((field, detail.strip()))
    return pairs
