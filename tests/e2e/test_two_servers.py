"""Two server processes on one root: a change made through one reaches a client of the
other as a resources/updated notification (2025 subscribe and 2026 listen)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ResourceUpdatedNotification

from .test_stdio import connect, module_params, text

ACTIVE = "plans://active"


async def make_plan(client: Client) -> str:
    r = await client.call_tool("PlanCreate", {"title": "Shared", "analysis": "a", "approach": "b"})
    assert not r.is_error, text(r)
    return str(r.structured_content["plan"]["name"])


async def test_legacy_client_hears_the_other_servers_change(tmp_path: Path) -> None:
    root = tmp_path / "root"
    heard: list[str] = []
    got = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            heard.append(str(message.params.uri))
            got.set()

    params = module_params(root, tmp_path)
    with (tmp_path / "a.log").open("w") as err_a:
        from mcp.client.stdio import stdio_client

        async with Client(stdio_client(params, errlog=err_a), mode="legacy", message_handler=on_message) as a:
            plan = await make_plan(a)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await a.subscribe_resource(ACTIVE)
            await anyio.sleep(0.6)  # let the watcher settle on the plan's creation
            got = anyio.Event()
            heard.clear()
            async with connect(module_params(root, tmp_path), tmp_path / "b.log", "legacy") as b:
                r = await b.call_tool("TaskCreate", {"subject": "From B", "description": "d", "plan": plan})
                assert not r.is_error, text(r)
                with anyio.fail_after(10):
                    await got.wait()
            assert ACTIVE in heard
            board = text(await a.call_tool("TaskList", {"plan": plan}))
            assert "#1 [pending] From B" in board


@pytest.mark.parametrize("mode", ["auto"])
async def test_listening_client_hears_the_other_servers_change(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "root"
    async with connect(module_params(root, tmp_path), tmp_path / "a.log", mode) as a:
        plan = await make_plan(a)
        uri = f"plans://{plan}"
        async with (
            a.listen(resource_subscriptions=[uri]) as events,
            connect(module_params(root, tmp_path), tmp_path / "b.log", mode) as b,
        ):
            r = await b.call_tool("TaskCreate", {"subject": "From B", "description": "d", "plan": plan})
            assert not r.is_error, text(r)
            with anyio.fail_after(10):
                async for event in events:
                    if getattr(event, "uri", None) == uri:
                        break
