"""A scripted MCP session over every tool, resource and prompt the server lists, recorded
answer by answer, and the way to record it again.

tests/server/test_recorded_session.py plays the session (`play`) against each store in both protocol
modes and compares what the client received, after `normalised`, with the recording in
tests/server/recorded/<store>-<mode>.json, byte for byte.

Re-record (only when a change of behaviour is intended, and review the diff):

    PYTHONPATH=. .venv/bin/python -m tests.support.record_session --write

which runs that test with RECORD_ENV set, so the recordings are written from the very
fixtures (stores, modes, temp folders) the comparison uses.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from tests.support.procs import REPO

RECORDED = REPO / "tests" / "server" / "recorded"
TEST = "tests/server/test_recorded_session.py"
# Set (to "1") by `--write`: the test writes the recordings instead of comparing.
RECORD_ENV = "PLANNING_MCP_RECORD_SESSION"

PLAN = "2026-05-28-add-search"
LATER = "2026-05-29-later"

# What truly varies between runs, each replaced by a stable placeholder; everything else is
# compared as the client received it. Nothing else varied across repeated recordings (no
# temp paths, uuids or durations reach an answer); add a pattern here only for a value that
# is proven to vary, never to hide a difference.
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_PG_URL = re.compile(r"postgres(?:ql)?://[^\s\"'`#]+")
NORMALISER = (
    ("ISO timestamps: created, updated, history, lease expiry, gate times", "<time>"),
    ("PostgreSQL URLs up to the '#' of a location: host, port and the test's own database", "<pg-url>"),
)


def normalised(text: str) -> str:
    """`text` with what varies between runs (NORMALISER) replaced by placeholders."""
    return _TIMESTAMP.sub("<time>", _PG_URL.sub("<pg-url>", text))


def recording_path(store: str, mode: str) -> Path:
    return RECORDED / f"{store}-{mode}.json"


def as_json(value: Any) -> Any:
    """An SDK answer as the wire's JSON (camelCase names, absent fields left out)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


class Recorder:
    """Calls the server and keeps each request with its full answer, or its JSON-RPC error."""

    def __init__(self) -> None:
        self.exchanges: list[dict[str, Any]] = []

    async def ask(self, method: str, params: dict[str, Any], call: Awaitable[Any]) -> Any:
        entry: dict[str, Any] = {"method": method, "params": params}
        try:
            answer = await call
        except MCPError as error:
            entry["error"] = as_json(error.error)
            self.exchanges.append(entry)
            return None
        entry["result"] = as_json(answer)
        self.exchanges.append(entry)
        return answer

    async def tool(self, c: Client, name: str, args: dict[str, Any] | None = None) -> Any:
        args = args or {}
        return await self.ask("tools/call", {"name": name, "arguments": args}, c.call_tool(name, args))

    async def read(self, c: Client, uri: str) -> Any:
        return await self.ask("resources/read", {"uri": uri}, c.read_resource(uri))

    async def prompt(self, c: Client, name: str, args: dict[str, str] | None = None) -> Any:
        params: dict[str, Any] = {"name": name, **({"arguments": args} if args is not None else {})}
        return await self.ask("prompts/get", params, c.get_prompt(name, args))

    def initialized(self, c: Client) -> None:
        self.exchanges.append(
            {
                "method": "initialize",
                "result": {
                    "protocolVersion": c.protocol_version,
                    "serverInfo": as_json(c.server_info),
                    "capabilities": as_json(c.server_capabilities),
                    "instructions": c.instructions,
                },
            }
        )

    def text(self) -> str:
        """The session as JSON (keys in the order received), normalised."""
        return normalised(json.dumps(self.exchanges, indent=1, ensure_ascii=False) + "\n")


PLAN_TASKS: list[dict[str, Any]] = [
    {
        "subject": "Design the index",
        "description": "tables and tokens",
        "activeForm": "Designing the index",
        "priority": 1,
        "labels": ["db"],
        "acceptance": ["schema reviewed"],
    },
    {
        "subject": "Build the query API",
        "description": "GET /search",
        "blockedBy": [1],
        "priority": 0,
        "labels": ["api"],
    },
    {"subject": "Rank results", "blockedBy": [1], "labels": ["api", "ranking"], "parent": 2},
    {"subject": "Sign off", "blockedBy": [2, 3], "gate": "human"},
    {"subject": "Deploy", "blockedBy": [4], "acceptance": ["deployed", "smoke test passes"]},
]


async def _discovery(r: Recorder, c: Client) -> None:
    r.initialized(c)
    await r.ask("tools/list", {}, c.list_tools())
    await r.ask("resources/list", {}, c.list_resources())
    await r.ask("resources/templates/list", {}, c.list_resource_templates())
    await r.ask("prompts/list", {}, c.list_prompts())


async def _plans(r: Recorder, c: Client) -> None:
    await r.read(c, "plans://active")
    await r.tool(c, "PlanList")
    await r.tool(c, "TaskList")  # no plan yet
    later = {"title": "Later", "analysis": "a", "approach": "b", "name": "later", "date": "2026-05-29"}
    await r.tool(c, "PlanCreate", {**later, "tasks": [{"subject": "One"}, {"subject": "Two"}], "review": True})
    await r.tool(
        c,
        "PlanCreate",
        {
            "title": "Add search",
            "analysis": "Users cannot find old notes.",
            "approach": "An inverted index behind one endpoint.",
            "steps": ["index", "endpoint", "ranking"],
            "date": "2026-05-28",
            "tasks": PLAN_TASKS,
        },
    )
    await r.tool(c, "PlanCreate", {"title": "No analysis", "approach": "b"})  # refused: analysis is required
    await r.tool(c, "PlanCreate", {**later, "tasks": [{"subject": "x", "blockedBy": [7]}]})  # refused blocker
    await r.tool(c, "PlanList")
    await r.tool(c, "PlanList", {"includeDone": True})


async def _tasks(r: Recorder, c: Client) -> None:
    made = {"subject": "Tokenise", "description": "split words", "blockedBy": [1], "owner": "bob"}
    await r.tool(c, "TaskCreate", {**made, "metadata": {"k": "v"}, "priority": 2, "labels": ["db"]})
    await r.tool(c, "TaskCreate", {"subject": "Benchmark", "blocks": [5], "plan": PLAN, "acceptance": ["p95 < 50"]})
    await r.tool(c, "TaskCreate", {"subject": "Orphan", "blockedBy": [99]})  # refused
    await r.tool(c, "TaskCreate", {"subject": "Gated", "gate": {"after": "2030-01-01T00:00:00Z"}, "plan": LATER})
    await r.tool(c, "TaskCreate", {"subject": "Tokenise again", "plan": "2026-01-01-nothing"})  # refused
    await r.tool(c, "TaskGet", {"taskId": 1, "plan": PLAN})
    await r.tool(c, "TaskGet", {"taskId": "#7", "plan": PLAN})
    await r.tool(c, "TaskGet", {"taskId": 1, "plan": LATER})
    await r.tool(c, "TaskGet", {"taskId": 99, "plan": PLAN})  # refused
    await r.tool(c, "TaskGet", {"taskId": 2})  # the current plan


async def _updates(r: Recorder, c: Client) -> None:
    on = {"plan": PLAN}
    await r.tool(c, "TaskUpdate", {"taskId": "next", "status": "in_progress", "owner": "alice", "label": "db", **on})
    await r.tool(c, "TaskUpdate", {"taskId": 1, "note": "schema drafted", **on})
    await r.tool(c, "TaskUpdate", {"taskId": 1, "status": "completed", **on})
    await r.tool(c, "TaskUpdate", {"taskId": "next", "status": "in_progress", "owner": "alice", "parent": 2, **on})
    await r.tool(c, "TaskUpdate", {"taskId": "next", "status": "in_progress", "owner": "carol", "leaseSeconds": 600})
    await r.tool(c, "TaskUpdate", {"taskId": 4, "status": "completed"})  # refused: a person completes it
    await r.tool(
        c,
        "TaskUpdate",
        {
            "taskId": 6,
            "subject": "Tokenise words",
            "description": "split on spaces",
            "activeForm": "Tokenising",
            "metadata": {"k": None, "area": "web"},
            "addBlockedBy": [7],
            "removeBlockedBy": [1],
            "addBlocks": [4],
            "priority": -1,
            "labels": ["db", "text"],
            "acceptance": ["handles unicode"],
            **on,
        },
    )
    await r.tool(c, "TaskUpdate", {"taskId": 7, "removeBlocks": [5], **on})
    await r.tool(c, "TaskUpdate", {"taskId": 2, "status": "bogus"})  # refused: not a status
    await r.tool(c, "TaskUpdate", {"taskId": 1, "status": "completed", "waitSeconds": 5})  # refused
    await r.tool(c, "TaskUpdate", {"taskId": 2, "addBlocks": [2]})  # refused: a task cannot block itself
    await r.tool(c, "TaskUpdate", {"taskId": 6, "addBlocks": [7]})  # refused: a cycle
    await r.tool(c, "TaskCreate", {"subject": "Scratch"})
    await r.tool(c, "TaskUpdate", {"taskId": 8, "status": "deleted"})
    await r.tool(c, "TaskUpdate", {"taskId": 8, "status": "pending"})  # refused: gone


async def _lists(r: Recorder, c: Client) -> None:
    await r.tool(c, "TaskList")
    for args in (
        {"status": "ready"},
        {"status": "blocked"},
        {"status": "completed"},
        {"status": "in_progress"},
        {"status": "pending", "owner": "bob"},
        {"label": "api"},
        {"parent": 2},
        {"plan": LATER},
    ):
        await r.tool(c, "TaskList", args)
    page = await r.tool(c, "TaskList", {"limit": 2})
    cursor = (page.structured_content or {}).get("nextCursor") if page else None
    await r.tool(c, "TaskList", {"limit": 2, "cursor": cursor or "missing"})
    await r.tool(c, "TaskList", {"cursor": "not-a-cursor"})  # refused
    await r.tool(c, "TaskList", {"plan": "2026-01-01-nothing"})  # refused


async def _todo_and_reads(r: Recorder, c: Client) -> None:
    items = [
        {"content": "read the code", "status": "completed"},
        {"content": "write the index", "status": "in_progress", "activeForm": "Writing the index"},
        {"content": "test it"},
    ]
    await r.tool(c, "todo", {"items": items, "topic": "index"})
    await r.tool(c, "todo", {"items": []})
    for uri in ("plans://active", f"plans://{PLAN}", f"plans://{PLAN}/tasks/2", f"plans://{LATER}", "plans://nope"):
        await r.read(c, uri)
    await r.read(c, f"plans://{PLAN}/tasks/99")
    await r.prompt(c, "plan-mode", {"task": "add search"})
    await r.prompt(c, "resume", {})
    await r.prompt(c, "verify", {"plan": PLAN})
    await r.prompt(c, "verify", {})
    await r.prompt(c, "plan-mode", {})  # refused: task is required
    await r.prompt(c, "nope", {})  # refused: no such prompt
    await r.tool(c, "NoSuchTool", {})


async def _archive(r: Recorder, c: Client) -> None:
    await r.tool(c, "PlanArchive", {"plan": PLAN})  # refused: tasks are open
    await r.tool(c, "PlanArchive", {"plan": LATER, "force": True})
    await r.tool(c, "PlanArchive", {"plan": LATER})  # refused: already archived
    await r.tool(c, "PlanList", {"includeDone": True})
    await r.read(c, "plans://active")


async def _second_session(r: Recorder, c: Client) -> None:
    """A new connection: what it is told, and a claim while another session holds tasks."""
    r.initialized(c)
    await r.tool(c, "TaskUpdate", {"taskId": "next", "status": "in_progress", "owner": "erin"})  # which plan?
    await r.tool(c, "TaskUpdate", {"taskId": "next", "status": "in_progress", "owner": "erin", "plan": PLAN})
    await r.tool(c, "TaskUpdate", {"taskId": 3, "status": "completed", "plan": PLAN})
    await r.tool(c, "TaskList", {"status": "ready", "plan": PLAN})
    await r.prompt(c, "resume", {})


async def _first_session(r: Recorder, c: Client) -> None:
    await _discovery(r, c)
    await _plans(r, c)
    await _tasks(r, c)
    await _updates(r, c)
    await _lists(r, c)
    await _todo_and_reads(r, c)


async def play(connect: Callable[[], Any]) -> Recorder:
    """The session: two connections (a fresh server object each) to the same store."""
    r = Recorder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        async with connect() as c:
            await _first_session(r, c)
        async with connect() as c:
            await _second_session(r, c)
            await _archive(r, c)
    return r


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print(__doc__, file=sys.stderr)
        return 2
    env = {**os.environ, RECORD_ENV: "1"}
    command = [sys.executable, "-m", "pytest", TEST, "-n", "0", "-q", "-p", "no:cacheprovider"]
    return subprocess.run(command, cwd=REPO, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
