"""The page: board.html with its stylesheet, script and settings inlined, so one document
carries everything (nothing is fetched from the network; the MCP App resource is the same
document). The actions a person can take are defined here once, as TaskUpdate arguments."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, Literal

from .. import __version__
from .data import COLUMN_TITLES, COLUMNS

Mode = Literal["web", "app"]

# Board action -> the TaskUpdate arguments it stands for (owner: the name the person typed).
ACTIONS: dict[str, dict[str, Any]] = {
    "start": {"status": "in_progress"},
    "complete": {"status": "completed"},
    "reopen": {"status": "pending"},
    "claim": {"owner": ""},
}
# A person's own action, no TaskUpdate of an agent's: completing a gated task (gates.py).
# The web board only: the MCP App acts through the agent's tool calls.
APPROVE = "approve"
ACTION_LABELS = {"start": "Start", "complete": "Complete", "reopen": "Reopen", "claim": "Claim", APPROVE: "Approve"}
APP_TOOL = "BoardView"  # the app-only tool the MCP App refreshes through
APPS_PROTOCOL = "2026-01-26"  # the MCP Apps (ext-apps) specification version the app speaks
APP_REFRESH_MS = 3000


@cache
def _asset(name: str) -> str:
    return (resources.files(__package__) / "assets" / name).read_text(encoding="utf-8")


def _script_safe(text: str) -> str:
    """Text placed inside a <script> element cannot close it or open a comment."""
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def _json_in_script(value: object) -> str:
    """JSON inside a <script> element: every `<` as the JSON escape \\u003c, so the text can
    neither end the element nor open a comment and stays valid JSON (`<\\!--` would not)."""
    return json.dumps(value).replace("<", "\\u003c")


def render_page(mode: Mode, base: str = "/board") -> str:
    config = {
        "mode": mode,
        "base": base,
        "version": __version__,
        "columns": [{"key": k, "title": COLUMN_TITLES[k]} for k in COLUMNS],
        "actions": ACTIONS,
        "actionLabels": ACTION_LABELS,
        "approve": APPROVE if mode == "web" else None,
        "appTool": APP_TOOL,
        "appsProtocol": APPS_PROTOCOL,
        "appRefreshMs": APP_REFRESH_MS,
    }
    html = _asset("board.html")
    # Replaced in this order, each placeholder once: a later asset cannot inject an earlier one's.
    html = html.replace("/*CSS*/", _asset("board.css"), 1)
    html = html.replace("/*CONFIG*/", _json_in_script(config), 1)
    return html.replace("/*JS*/", _script_safe(_asset("board.js")), 1)
