"""Fixtures for the protocol tests: a real temp root, an in-memory client in both
connection modes, and small helpers shared by the test files (exposed as fixtures
so nothing has to import this module)."""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from server.app import build_server

MODES = ["legacy", "auto"]

SEED_DATE = "2026-05-28"
SEED_NAME = "2026-05-28-add-auth"
SEED_SUBJECTS = [
    "Design auth schema",
    "Implement JWT middleware",
    "Add login endpoint",
    "Add logout endpoint",
]
SEED_ANALYSIS = "Users cannot log in; the API has no notion of identity."
SEED_APPROACH = "JWT in an Authorization header, checked by middleware."


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "root"


Connect = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture
def connect(root: Path, mode: str) -> Connect:
    """`async with connect() as c`: a NEW server object on `root` (fresh sessions),
    connected in the test's mode. Extra keyword arguments go to Client."""

    @asynccontextmanager
    async def _connect(**kwargs: Any) -> AsyncIterator[Client]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # subscribe_resource is deprecated (MCPDeprecationWarning)
            async with Client(build_server(root), mode=mode, **kwargs) as client:  # type: ignore[arg-type]
                yield client

    return _connect


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


@pytest.fixture
def text() -> Callable[[CallToolResult], str]:
    return text_of


Call = Callable[..., Awaitable[CallToolResult]]


@pytest.fixture
def ok() -> Callable[[Client, str, dict[str, Any] | None], Awaitable[CallToolResult]]:
    """Call a tool that must succeed; a success always carries structured content."""

    async def _ok(client: Client, tool: str, args: dict[str, Any] | None = None) -> CallToolResult:
        result = await client.call_tool(tool, args or {})
        assert not result.is_error, f"{tool} {args} failed: {text_of(result)}"
        assert isinstance(result.structured_content, dict) and result.structured_content, (
            f"{tool} answered without structured content"
        )
        return result

    return _ok


@pytest.fixture
def seed(ok: Any) -> Callable[[Client], Awaitable[CallToolResult]]:
    """The seed plan: four tasks, each blocked by the one before."""

    async def _seed(client: Client, **overrides: Any) -> CallToolResult:
        args: dict[str, Any] = {
            "title": "Add auth",
            "analysis": SEED_ANALYSIS,
            "approach": SEED_APPROACH,
            "date": SEED_DATE,
            "tasks": [
                {"subject": s, "description": f"do: {s}", **({"blockedBy": [i]} if i else {})}
                for i, s in enumerate(SEED_SUBJECTS)
            ],
        }
        args.update(overrides)
        return await ok(client, "PlanCreate", args)

    return _seed


def hash_tree(root: Path) -> dict[str, str]:
    """Every file and folder under root, by relative path: a content hash (files) or "dir".

    A plan's `.lock` is left out: it is the (empty) lock file of the contract's layout and
    is created the first time a writer takes the lock, refused or not."""
    out: dict[str, str] = {}
    if not root.exists():
        return out
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.name == ".lock":
            continue
        out[rel] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def tree() -> Callable[[Path], dict[str, str]]:
    return hash_tree
