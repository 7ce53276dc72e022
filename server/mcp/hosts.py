"""Hosts that show the model something other than what the protocol hands them.

Claude Code (clientInfo.name "claude-code") gives the model only the compact JSON of a
tool result's structuredContent whenever there is one, dropping its text: the contract's
texts and the reminders in them never reached the model, and the JSON cost more tokens
than the text. It also keeps the server's `instructions` from the moment it connected,
so an Active Plans block in them goes stale (after /clear it still said `(none)` beside
the hooks' current one). For such a host the server sends:

- tool results as text only (no structuredContent), so the model reads the contract's
  texts at the text's own token cost, and tools without an outputSchema (which would
  promise structured results; Claude Code never shows it to the model anyway), and
  TaskList and TaskUpdate marked to load always (ALWAYS_LOADED);
- instructions without the Active Plans block: Claude Code's hooks (`planning-mcp hook
  SessionStart` / `UserPromptSubmit`) bring the current one;
- no plan reminder of its own: the PostToolUse hook counts every tool call of the session
  (Bash and Edit included, which the server never hears of) and says it on its round,
  so it is said once. The todo reminder stays the server's (only it holds the list).

Every other client (SDKs, Inspector, the Apps board) gets exactly what the contract says.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import ServerRequestContext

from .sdk import connection_of

# clientInfo.name of the hosts above, as they send it in `initialize`.
TEXT_ONLY_HOSTS = frozenset({"claude-code"})
# Claude Code defers MCP tools behind its tool search (the model sees only their names
# until it searches); these load always: every round of work and every plan reminder
# points at them, while the others are used once a plan (PlanCreate, TaskCreate) or
# rarely, and are found by a search when needed.
ALWAYS_LOADED = frozenset({"TaskList", "TaskUpdate"})
ALWAYS_LOAD_META = {"anthropic/alwaysLoad": True}


def client_name(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The client's self-given name: from `initialize` itself, else its connection."""
    if ctx.method == "initialize":
        info = (ctx.params or {}).get("clientInfo")
        name = info.get("name") if isinstance(info, dict) else None
        return name if isinstance(name, str) else None
    connection = connection_of(ctx)
    params = connection.client_params if connection is not None else None
    return params.client_info.name if params is not None else None


def shows_text_only(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Is this a host that shows its model only structuredContent when present (and
    keeps connect-time instructions)? Then it gets the text-only answers above."""
    return client_name(ctx) in TEXT_ONLY_HOSTS


def text_only(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """A tools/call result as such a host's model must see it (its text blocks,
    unchanged), or a tools/list result that promises no structured results."""
    if method == "tools/call":
        result.pop("structuredContent", None)
    else:
        for tool in result.get("tools", []):
            if isinstance(tool, dict):
                tool.pop("outputSchema", None)
                if tool.get("name") in ALWAYS_LOADED:
                    tool["_meta"] = {**(tool.get("_meta") or {}), **ALWAYS_LOAD_META}
    return result
