"""Peer MCP task servers used as benchmark baselines.

Each peer is a class bound to a fresh working directory (data dir / project root).
It knows how to start the server over stdio and exposes the common workload:

    peer = PEERS["shrimp"](workdir)          # or "task-master-ai"
    peer.prepare()                           # create data dir / project files
    async with peer.client() as c:           # mcp.Client, already initialized
        r = await peer.create_task(c, 0)     # -> CallToolResult
        [tid] = peer.task_ids(r)
        await peer.set_status(c, tid, "in_progress")   # pending|in_progress|done
        r = await peer.list_tasks(c)

Every peer is filled through its own create tool with the task every server gets
(bench/config.py: the same subject and description, nothing else).

Tool and argument names below were taken from the servers' own tools/list
answers (shrimp 1.0.21, task-master-ai 0.43.1); none of the calls used need an
AI key. Install the peers with bench/peers/install.sh (PEERS_DIR overrides the
default cache folder bench/.peers).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any, ClassVar, TextIO

from mcp import Client, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, ListRootsResult

from bench.config import description, subject

PEERS_DIR = Path(os.environ.get("PEERS_DIR") or Path(__file__).resolve().parent.parent / ".peers")

STATUSES = ("pending", "in_progress", "done")  # common vocabulary used by the workload


class PeerError(RuntimeError):
    """A peer answered a workload call with an error (flagged or in plain text)."""


def result_text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def answer_size(result: CallToolResult) -> int:
    """Characters a model would see: text content + JSON of structured content."""
    size = len(result_text(result))
    if result.structured_content is not None:
        size += len(wire(result.structured_content))
    return size


def tools_list_size(tools: list[Any]) -> int:
    """Size in characters of a tools/list answer's tool array as JSON-RPC sends it
    (compact separators, characters not escapes), the same measure for every server."""
    return len(wire([t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]))


def wire(value: Any) -> str:
    """JSON as a JSON-RPC message carries it: compact, characters not escapes."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _check(result: CallToolResult, what: str) -> CallToolResult:
    if result.is_error:
        raise PeerError(f"{what}: {result_text(result)[:500]}")
    return result


class Peer:
    name: ClassVar[str]
    package: ClassVar[str]
    version: ClassVar[str]
    entry_rel: ClassVar[str]  # entry point, relative to node_modules/<package>
    client_mode: ClassVar[str] = "legacy"  # both peers are 2025-era (initialize handshake) servers

    def __init__(self, workdir: str | Path):
        self.workdir = Path(workdir).resolve()

    # -- installation ----------------------------------------------------------
    @classmethod
    def entry(cls) -> Path:
        return PEERS_DIR / cls.package / "node_modules" / cls.package / cls.entry_rel

    @classmethod
    def installed_version(cls) -> str | None:
        pkg = PEERS_DIR / cls.package / "node_modules" / cls.package / "package.json"
        try:
            version: str = json.loads(pkg.read_text())["version"]
            return version
        except (OSError, ValueError, KeyError):
            return None

    @classmethod
    def available(cls) -> bool:
        return shutil.which("node") is not None and cls.entry().is_file()

    # -- starting ---------------------------------------------------------------
    def env(self) -> dict[str, str]:
        """Extra env (merged by the SDK over its safe default env: HOME, PATH, ...)."""
        return {}

    def cwd(self) -> Path | None:
        return None

    def server_params(self) -> StdioServerParameters:
        return StdioServerParameters(
            command=shutil.which("node") or "node",
            args=[str(self.entry())],
            env=self.env(),
            cwd=self.cwd(),
        )

    def client_kwargs(self) -> dict[str, Any]:
        return {"mode": self.client_mode}

    def client(self, errlog: TextIO = sys.stderr, **kw: Any) -> Client:
        """An mcp.Client for this peer; the server's stderr goes to errlog."""
        return Client(stdio_client(self.server_params(), errlog=errlog), **(self.client_kwargs() | kw))

    def prepare(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)

    # -- workload ---------------------------------------------------------------
    async def create_task(self, client: Client, i: int) -> CallToolResult:
        raise NotImplementedError

    def task_ids(self, result: CallToolResult) -> list[str]:
        raise NotImplementedError

    async def set_status(self, client: Client, task_id: str, status: str) -> CallToolResult:
        raise NotImplementedError

    async def list_tasks(self, client: Client) -> CallToolResult:
        raise NotImplementedError

    def stored_task_count(self) -> int | None:
        """Tasks found in the peer's data file on disk; None if it is missing or unreadable."""
        raise NotImplementedError


class ShrimpPeer(Peer):
    """mcp-shrimp-task-manager: tasks in $DATA_DIR/tasks.json, UUID ids.

    No plain "add task" tool: split_tasks(updateMode="append", tasksRaw=<JSON list>)
    adds tasks without any AI. Status has no setter either: execute_task moves a
    task to in_progress, verify_task(score>=80) moves an in_progress task to
    completed. There is no way back to pending.
    """

    name = "shrimp"
    package = "mcp-shrimp-task-manager"
    version = "1.0.21"
    entry_rel = "dist/index.js"

    _ID_RE = re.compile(r"\*\*ID:\*\* `([0-9a-f-]{36})`")

    @property
    def data_dir(self) -> Path:
        return self.workdir / "data"

    def env(self) -> dict[str, str]:
        return {"DATA_DIR": str(self.data_dir), "TEMPLATES_USE": "en", "ENABLE_GUI": "false"}

    def client_kwargs(self) -> dict[str, Any]:
        # Shrimp calls roots/list several times per tool call (to place its data dir).
        # Without a roots callback each one fails and dumps a stack trace on stderr;
        # answering with no roots makes it use DATA_DIR as-is.
        async def no_roots(_ctx: Any) -> ListRootsResult:
            return ListRootsResult(roots=[])

        return super().client_kwargs() | {"list_roots_callback": no_roots}

    def prepare(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)

    async def create_task(self, client: Client, i: int) -> CallToolResult:
        # The same task as everyone's (bench/config.py); implementationGuide is required, so empty.
        task = {"name": subject(i), "description": description(i), "implementationGuide": ""}
        r = await client.call_tool("split_tasks", {"updateMode": "append", "tasksRaw": json.dumps([task])})
        _check(r, "split_tasks")
        if not self.task_ids(r):  # validation errors come back as plain text, not isError
            raise PeerError(f"split_tasks: {result_text(r)[:500]}")
        return r

    def task_ids(self, result: CallToolResult) -> list[str]:
        return self._ID_RE.findall(result_text(result))

    async def set_status(self, client: Client, task_id: str, status: str) -> CallToolResult:
        if status == "in_progress":
            return _check(await client.call_tool("execute_task", {"taskId": task_id}), "execute_task")
        if status == "done":
            # verify_task only completes in_progress tasks; execute_task is a no-op
            # guidance dump if the task is already in progress.
            _check(await client.call_tool("execute_task", {"taskId": task_id}), "execute_task")
            summary = f"Task {task_id} completed and verified by the benchmark workload."
            return _check(
                await client.call_tool("verify_task", {"taskId": task_id, "score": 100, "summary": summary}),
                "verify_task",
            )
        raise ValueError(f"shrimp cannot set status {status!r} (only in_progress, done)")

    async def list_tasks(self, client: Client) -> CallToolResult:
        return _check(await client.call_tool("list_tasks", {"status": "all"}), "list_tasks")

    def stored_task_count(self) -> int | None:
        try:
            return len(json.loads((self.data_dir / "tasks.json").read_text())["tasks"])
        except (OSError, ValueError, KeyError, TypeError):
            return None


class TaskMasterPeer(Peer):
    """task-master-ai: tasks in <projectRoot>/.taskmaster/tasks/tasks.json, integer ids.

    add_task with explicit title + description is the manual (no-AI) path; with only
    `prompt` it calls a model. Every call takes an absolute projectRoot.
    """

    name = "task-master-ai"
    package = "task-master-ai"
    version = "0.43.1"
    entry_rel = "dist/mcp-server.js"

    _STATUS: ClassVar[dict[str, str]] = {"pending": "pending", "in_progress": "in-progress", "done": "done"}

    @property
    def project_root(self) -> Path:
        return self.workdir / "project"

    def env(self) -> dict[str, str]:
        # TASK_MASTER_TOOLS=all registers all 44 tools (default "core" = 7 tools).
        # HOME must differ from projectRoot (initialize_project refuses HOME).
        return {"TASK_MASTER_TOOLS": "all", "HOME": str(self.workdir / "home")}

    def cwd(self) -> Path:
        # Startup reads .taskmaster/config.json from cwd to decide on (Sentry) telemetry.
        return self.project_root

    def prepare(self) -> None:
        """Equivalent of initialize_project, minus the editor rule files it also writes."""
        tm = self.project_root / ".taskmaster"
        (tm / "tasks").mkdir(parents=True, exist_ok=True)
        (self.workdir / "home").mkdir(parents=True, exist_ok=True)
        # anonymousTelemetry=false: no Sentry init (it would try to reach sentry.io and
        # wrap every call). Side effect: one non-JSON line on stdout at startup
        # ("✓ Anonymous telemetry disabled ..."), which the SDK client skips.
        (tm / "config.json").write_text(json.dumps({"global": {"anonymousTelemetry": False, "defaultTag": "master"}}))
        (tm / "state.json").write_text(json.dumps({"currentTag": "master", "branchTagMapping": {}}))
        (tm / "tasks" / "tasks.json").write_text(
            json.dumps({"master": {"tasks": [], "metadata": {"version": "1.0.0", "description": "benchmark"}}})
        )

    def _args(self, **kw: Any) -> dict[str, Any]:
        return {"projectRoot": str(self.project_root), **kw}

    async def create_task(self, client: Client, i: int) -> CallToolResult:
        r = await client.call_tool(
            "add_task",
            self._args(title=subject(i), description=description(i)),  # the same task as everyone's
        )
        return _check(r, "add_task")

    def task_ids(self, result: CallToolResult) -> list[str]:
        try:
            return [str(json.loads(result_text(result))["data"]["taskId"])]
        except (ValueError, KeyError, TypeError):
            return []

    async def set_status(self, client: Client, task_id: str, status: str) -> CallToolResult:
        # native statuses: pending, in-progress, done, review, deferred, cancelled, blocked
        tm_status = self._STATUS.get(status, status)
        result = await client.call_tool("set_task_status", self._args(id=task_id, status=tm_status))
        return _check(result, "set_task_status")

    async def list_tasks(self, client: Client) -> CallToolResult:
        return _check(await client.call_tool("get_tasks", self._args()), "get_tasks")

    def stored_task_count(self) -> int | None:
        try:
            data = json.loads((self.project_root / ".taskmaster" / "tasks" / "tasks.json").read_text())
            return len(data["master"]["tasks"])
        except (OSError, ValueError, KeyError, TypeError):
            return None


PEERS: dict[str, type[Peer]] = {cls.name: cls for cls in (ShrimpPeer, TaskMasterPeer)}


def available() -> dict[str, bool]:
    return {name: cls.available() for name, cls in PEERS.items()}
