"""The board inside the chat: an MCP App (the ext-apps extension, io.modelcontextprotocol/ui).

- `ui://planning/board` is the board page (text/html;profile=mcp-app), the same document
  as the browser's with the host protocol (ui/initialize, tool results, tools/call over
  postMessage) in place of HTTP.
- PlanList and TaskList link to it (`_meta.ui.resourceUri`): those are the calls after which
  a person wants to see the plan. Their text answers are unchanged, the fallback for every
  client without Apps (Claude Code renders none).
- BoardView is app-only (`_meta.ui.visibility: ["app"]`): the app refreshes through it, the
  model never sees it. It, the `_meta.ui` links and the ui:// resource are listed only to
  clients that negotiated the extension: tools/list and resources/list are unchanged for any
  other client.
"""

from __future__ import annotations

import weakref
from typing import Annotated, Any

import anyio.to_thread
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, client_supports_apps
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resources import TextResource
from mcp.types import (
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    Resource,
    TextContent,
    ToolAnnotations,
)
from pydantic import Field

from planning_core import PlanningError

from ..board.data import board_data
from ..board.page import APP_TOOL, render_page
from . import sdk
from .state import AppState, app_state

APP_URI = "ui://planning/board"
LINKED_TOOLS = ("PlanList", "TaskList")
APP_ONLY_TOOLS = frozenset({APP_TOOL})

# The state each server object was built with, for the /board routes mounted beside /mcp.
_states: weakref.WeakKeyDictionary[MCPServer[Any], AppState] = weakref.WeakKeyDictionary()


def state_of(server: MCPServer[Any]) -> AppState:
    return _states[server]


def board_text(data: dict[str, Any]) -> str:
    plan = data.get("plan")
    if not plan:
        return data.get("error") or "No active plans."
    p = plan["progress"]
    return f"Board of {plan['name']}: {p['completed']}/{p['total']} done."


def for_client(ctx: ServerRequestContext[Any, Any], resources: list[Resource]) -> list[Resource]:
    """resources/list: the app's ui:// page only for a client that can show it."""
    if client_supports_apps(ctx):
        return resources
    return [r for r in resources if not str(r.uri).startswith("ui://")]


def register(server: MCPServer[AppState], state: AppState) -> None:
    """After the tools are registered (it links two of them)."""
    _states[server] = state
    server.add_resource(
        TextResource(
            uri=APP_URI,
            name="planning-board",
            title="Planning board",
            description="The plan as a live board (ready, blocked, in progress, done), for MCP Apps hosts.",
            mime_type=APP_MIME_TYPE,
            text=render_page("app"),
            meta={"ui": {"prefersBorder": True}},
        )
    )
    for name in LINKED_TOOLS:
        tool = sdk.find_tool(server, name)
        if tool is not None:
            tool.meta = {**(tool.meta or {}), "ui": {"resourceUri": APP_URI}}

    @server.tool(
        name=APP_TOOL,
        description="The board app's data.",
        annotations=ToolAnnotations(read_only_hint=True),
        meta={"ui": {"resourceUri": APP_URI, "visibility": ["app"]}},
    )
    async def board_view(
        ctx: Context, plan: Annotated[str | None, Field(description="default: first active plan")] = None
    ) -> CallToolResult:
        reads = app_state(ctx).actions
        try:
            data = await anyio.to_thread.run_sync(lambda: board_data(reads, plan, actions=True))
        except PlanningError as e:
            return CallToolResult(content=[TextContent(type="text", text=str(e))], is_error=True)
        return CallToolResult(content=[TextContent(type="text", text=board_text(data))], structured_content=data)

    # The schema as tools.py's compaction would leave it: only the Apps host reads it.
    view = sdk.find_tool(server, APP_TOOL)
    if view is not None:
        view.parameters = {"type": "object", "properties": {"plan": {"type": "string"}}}

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> ListToolsResult:
        tools = await server.list_tools()
        if client_supports_apps(ctx):
            return ListToolsResult(tools=tools)
        plain = []
        for tool in tools:
            if tool.name in APP_ONLY_TOOLS:
                continue
            meta = {k: v for k, v in (tool.meta or {}).items() if k != "ui"}
            plain.append(tool.model_copy(update={"meta": meta or None}))
        return ListToolsResult(tools=plain)

    sdk.add_request_handler(server, "tools/list", PaginatedRequestParams, list_tools)
    # SEP-2133: say the server offers the extension (no settings of its own).
    sdk.lowlevel(server).extensions[EXTENSION_ID] = {}
