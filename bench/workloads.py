"""What the harness asks of our server: seeding plans on disk, the per-operation runs
at each plan size (with the floor server's write floor at the same size), start-up, and
the durable-write floor the contract imposes timed in the harness itself."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from mcp import StdioServerParameters
from mcp.types import CallToolResult

from bench.config import Config, description, subject
from bench.measure import Floor, Series, timed
from bench.peers.peers import answer_size, result_text, wire
from bench.servers import BenchError, check, connect, find_pid, ours_params, ours_store_params, vm_kb
from planning_core import Task, TaskStatus
from planning_core.stores import open_store
from planning_core.stores.files import FileStore

PLAN_DATE, PLAN_SLUG = "2026-01-01", "bench"
PLAN = f"{PLAN_DATE}-{PLAN_SLUG}"
PLAN_MD = "# Benchmark plan\n\n## Analysis\n\nSeeded by bench/run.py.\n\n## Approach\n\nN/A\n\n## Steps\n\n"

# The operations timed at every size, in the order they run (and are reported).
OP_ORDER = [
    "TaskGet",
    "TaskList",
    "TaskList default page",
    "PlanList",
    "todo",
    "TaskCreate",
    "TaskUpdate status",
    "TaskUpdate addBlockedBy",
    "TaskList after a write",
]

# The durable writes one write makes, by label. The write floors (through the SDK and in the
# harness) are timed for each.
WRITE_FILES = {"1 file": 1, "2 files": 2}
# What each measured write replaces: a status change its task; addBlockedBy the task and its
# new blocker (whose `blocks` mirrors the link); TaskCreate the task and .highwatermark.
WRITE_OPS = {"TaskUpdate status": "1 file", "TaskUpdate addBlockedBy": "2 files", "TaskCreate": "2 files"}
PAGE_FLOOR = "SDK answering the same default page (floor server)"

TODO_ITEMS = [
    {"content": "Read the failing test", "status": "completed"},
    {"content": "Fix the parser", "status": "in_progress", "activeForm": "Fixing the parser"},
    {"content": "Run the suite", "status": "pending"},
]


def seed_tasks(n: int) -> list[Task]:
    """The n tasks every seeded plan holds. Every third task is completed, task 2 is in
    progress, every tenth task is blocked by the one before."""
    now = "2026-01-01T00:00:00Z"
    tasks = []
    for i in range(1, n + 1):
        status = TaskStatus.COMPLETED if i % 3 == 0 else TaskStatus.PENDING
        if i == 2:
            status = TaskStatus.IN_PROGRESS
        tasks.append(
            Task(
                id=i,
                subject=subject(i),
                description=description(i),
                status=status,
                blocked_by=[i - 1] if i % 10 == 0 else [],
                blocks=[i + 1] if (i + 1) % 10 == 0 and i + 1 <= n else [],
                active_form=f"Working on task {i}",
                created_at=now,
                updated_at=now,
            )
        )
    return tasks


def seed_plan(root: Path, n: int) -> tuple[str, int]:
    """Write a plan with n tasks straight to disk (the contract's layout, through
    planning_core's models), much faster than n tool calls. Returns the plan name and
    the id of a task with an open blocker."""
    store = FileStore(root)
    store.ensure_writable()
    path = store.todo / PLAN
    path.mkdir()
    (path / "plan.md").write_text(PLAN_MD)
    for task in seed_tasks(n):
        (path / f"task_{task.id}.json").write_text(task.to_json())
    (path / ".highwatermark").write_text(f"{n}\n")
    return PLAN, 10


def seed_store(url: str, n: int) -> str:
    """The same plan in any store (a database: one transaction through the seam)."""
    store = open_store(url)
    try:
        store.prepare()
        return store.create_plan(PLAN_DATE, PLAN_SLUG, PLAN_MD, seed_tasks(n))
    finally:
        store.close()


def count_store_tasks(url: str, plan: str = PLAN) -> int:
    store = open_store(url)
    try:
        return len(store.snapshot(plan).tasks)
    finally:
        store.close()


def count_task_files(root: Path, plan: str = PLAN) -> int:
    return sum(1 for n in os.listdir(root / "todo" / plan) if n.startswith("task_") and n.endswith(".json"))


@dataclass
class SizeResult:
    n: int
    ops: dict[str, Series]
    rss_kb: int | None = None
    list_text: int | None = None  # TaskList answer (limit 1,000): text characters
    list_structured: int | None = None  # ...and JSON of its structured content
    list_default_text: int | None = None  # TaskList with the default limit (200)
    list_default_structured: int | None = None
    page_chars: int | None = None  # the timed default-page answer (text + structured), at exactly n tasks
    tools: list[Any] = field(default_factory=list)  # the tools/list answer
    # The floor server's `durable_write` on a plan folder of n tasks, by WRITE_FILES label
    # (file store only: the PostgreSQL store writes no files).
    floor_writes: dict[str, Series] = field(default_factory=dict)
    # The floor server answering with the last default page of ours, saved (file store only).
    floor_page: Series | None = None


async def run_size(
    n: int, cfg: Config, floor: Floor, tmp: Path, log: TextIO, store_url: str | None = None
) -> SizeResult:
    """A fresh server on a plan seeded with n tasks: every operation in OP_ORDER,
    `cfg.calls` times each, each call followed by an echo call on the floor. The file
    store in a fresh folder, or (store_url) the empty store that URL names. File store:
    also the write floor, on a copy of the seeded plan (as many files in the folder)."""
    root = tmp / f"size-{n}"
    floor_folder: str | None = None
    if store_url is None:
        seed_plan(root, n)
        params, marker = ours_params(root), str(root)
        seed_plan(tmp / f"size-{n}-floor", n)
        floor_folder = str(tmp / f"size-{n}-floor" / "todo" / PLAN)
    else:
        seed_store(store_url, n)
        params, marker = ours_store_params(store_url), store_url
    res = SizeResult(n=n, ops={op: Series() for op in OP_ORDER})
    calls = cfg.calls

    async with connect(params, log) as c:
        res.tools = (await c.list_tools()).tools
        pid = find_pid(marker)

        async def measure(
            op: str,
            args_for: Callable[[int], dict[str, Any]],
            tool: str,
            before: Callable[[int], dict[str, Any]] | None = None,
        ) -> list[CallToolResult]:
            """`before`: the arguments of an untimed TaskUpdate made before each timed call."""
            out = []
            s = res.ops[op]
            for i in range(calls):
                if before is not None:
                    check(await c.call_tool("TaskUpdate", before(i)), f"the write before {op}")
                dt_, r = await timed(c.call_tool(tool, args_for(i)))
                check(r, f"{op} at {n} tasks")
                s.ours.append(dt_)
                s.echo.append(await floor.call())
                out.append(r)
            return out

        await measure("TaskGet", lambda i: {"taskId": (i * 7919) % n + 1}, "TaskGet")
        await measure("TaskList", lambda i: {"limit": 1000}, "TaskList")
        pages = await measure("TaskList default page", lambda i: {}, "TaskList")
        res.page_chars = answer_size(pages[-1])  # the plan has exactly n tasks here
        if floor_folder is not None:
            # The page's floor, timed right beside it: an SDK server giving back that very answer.
            saved = tmp / f"size-{n}-page.json"
            saved.write_text(json.dumps({"text": result_text(pages[-1]), "structured": pages[-1].structured_content}))
            res.floor_page = await floor.paired("replay", {"path": str(saved)}, calls)
        await measure("PlanList", lambda i: {}, "PlanList")
        await measure("todo", lambda i: {"items": TODO_ITEMS}, "todo")
        created = await measure(
            "TaskCreate", lambda i: {"subject": subject(n + i + 1), "description": description(n + i + 1)}, "TaskCreate"
        )
        ids = [r.structured_content["task"]["id"] for r in created]
        await measure("TaskUpdate status", lambda i: {"taskId": ids[i], "status": "in_progress"}, "TaskUpdate")
        # Seeded tasks never depend on the new ones, so no cycle; the cycle check still runs.
        await measure(
            "TaskUpdate addBlockedBy", lambda i: {"taskId": ids[i], "addBlockedBy": [(i * 31) % n + 1]}, "TaskUpdate"
        )
        # The writes' floor, timed here beside them (our server idle, as the floor server is
        # during our calls): the floor server doing only the durable write, through the SDK.
        if floor_folder is not None:
            for label, files in WRITE_FILES.items():
                args = {"folder": floor_folder, "files": files}
                res.floor_writes[label] = await floor.paired("durable_write", args, calls)

        # TaskList (limit 1,000) right after a write to the plan: what an agent sees after each
        # update. The page kept for the unchanged plan is gone; the rows of unchanged tasks are not.
        await measure(
            "TaskList after a write",
            lambda i: {"limit": 1000},
            "TaskList",
            before=lambda i: {"taskId": ids[i], "subject": subject(n + i + 1) + "."},
        )

        # Context cost of TaskList (limit 1,000 and the default page), at every size: a plan of
        # exactly n tasks (list the first n ids, which are the seeded ones).
        r = check(await c.call_tool("TaskList", {"limit": min(n, 1000)}), "TaskList")
        res.list_text = len(result_text(r))
        res.list_structured = len(wire(r.structured_content))
        r = check(await c.call_tool("TaskList", {}), "TaskList")
        res.list_default_text = len(result_text(r))
        res.list_default_structured = len(wire(r.structured_content))
        res.rss_kb = vm_kb(pid)
    kept = count_task_files(root) if store_url is None else count_store_tasks(store_url)
    if kept != n + calls:
        raise BenchError(f"{n}-task run: {kept} task files on disk, expected {n + calls}")
    return res


def durable_write_floor(folder: Path, files: int, reps: int) -> list[float]:
    """What the contract makes every write pay, without MCP or the planner: write
    `files` small temp files with fsync, rename them into place, fsync the folder
    (TaskUpdate: 1 file; TaskCreate: the task + .highwatermark)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = b"{" + b" " * 300 + b"}\n"
    out = []
    for r in range(reps):
        t = time.perf_counter()
        for f in range(files):
            tmp = folder / f".f{f}.{r}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, data)
            os.fsync(fd)
            os.close(fd)
            os.replace(tmp, folder / f"f{f}.json")
        dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        os.fsync(dfd)
        os.close(dfd)
        out.append(time.perf_counter() - t)
    return out


async def startup(params_for: Callable[[], StdioServerParameters], log: TextIO) -> float:
    """Process start to the first tools/list answer."""
    t = time.perf_counter()
    async with connect(params_for(), log) as c:
        await c.list_tools()
        return time.perf_counter() - t
