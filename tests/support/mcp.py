"""Talking to a server: the text of a tool result, a real `python -m server` over stdio."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

from .procs import REPO, child_env, console_script


def text_of(result: CallToolResult | Mapping[str, Any]) -> str:
    """The text blocks of a tool result, joined by newlines: an SDK result, or the raw
    JSON-RPC `result` object (a dict) from tests.support.raw_stdio."""
    if isinstance(result, Mapping):
        return "\n".join(c.get("text", "") for c in result.get("content", []) if c.get("type", "text") == "text")
    return "\n".join(block.text for block in result.content if block.type == "text")


def server_params(root: Path, cwd: Path = REPO) -> StdioServerParameters:
    """`python -m server --root ROOT` as a stdio child, with the repo importable."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "server", "--root", str(root)], env=child_env(), cwd=str(cwd)
    )


def script_params(root: Path, cwd: Path) -> StdioServerParameters:
    """The installed `planning-mcp --root ROOT` console script as a stdio child."""
    return StdioServerParameters(command=console_script(), args=["--root", str(root)], env=child_env(), cwd=str(cwd))


@asynccontextmanager
async def connect(
    params: StdioServerParameters, errlog: Path, mode: str = "auto", **kwargs: Any
) -> AsyncIterator[Client]:
    """A Client over the child's stdin/stdout; the child's stderr goes to `errlog`."""
    with errlog.open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err), mode=mode, **kwargs) as client:  # type: ignore[arg-type]
            yield client
