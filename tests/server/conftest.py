"""Fixtures for the protocol tests: an in-memory client in both connection modes over each
backend (`store`: files, memory, postgres), and small helpers shared by the test files
(exposed as fixtures so nothing has to import this module). A test that looks at files
asks for `root` (or `file_store`) and so runs on the file store only."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from planning_core.store import PlanStore
from planning_core.stores.files import FileStore
from server.mcp.app import build_server
from tests.support.files import tree_state
from tests.support.mcp import text_of
from tests.support.seed import CHAIN, plan_create_args

MODES = ["legacy", "auto"]


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def root(file_store: FileStore) -> Path:
    """The file store's root folder."""
    return file_store.root


Connect = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture
def connect(store: PlanStore, mode: str) -> Connect:
    """`async with connect() as c`: a NEW server object on the test's store (fresh
    sessions, unless the store keeps them: store.SharedSessions), connected in the
    test's mode. Extra keyword arguments go to Client."""

    @asynccontextmanager
    async def _connect(**kwargs: Any) -> AsyncIterator[Client]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # subscribe_resource is deprecated (MCPDeprecationWarning)
            async with Client(build_server(store), mode=mode, **kwargs) as client:  # type: ignore[arg-type]
                yield client

    return _connect


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
    """The seed plan (tests.support.seed, named PLAN_NAME), its four tasks each blocked by
    the one before; keyword arguments replace PlanCreate's arguments."""

    async def _seed(client: Client, **overrides: Any) -> CallToolResult:
        args = {**plan_create_args(CHAIN), **overrides}
        return await ok(client, "PlanCreate", args)

    return _seed


def hash_tree(root: Path) -> dict[str, str]:
    """Every entry under root by relative path (tests.support.files.tree_state). A plan's
    `.lock` is left out: it is the (empty) lock file of the contract's layout and is
    created the first time a writer takes the lock, refused or not."""
    return tree_state(root, ignore={".lock"})


@pytest.fixture
def tree() -> Callable[[Path], dict[str, str]]:
    return hash_tree
