"""The planning-mcp benchmark harness.

    python -m bench.run [--quick] [--peers] [--out PATH]      (from the repo root)
    python bench/run.py  [--quick] [--peers] [--out PATH]

Every server (ours, the echo floor, the peers) is a real subprocess driven by the
real SDK client (`mcp.Client`) over stdio, in the 2025 `legacy` mode (initialize
handshake): the peers speak only that, and on stdio it is as fast as `auto` for
ours and the floor, so one mode serves everyone. The client's response cache is off.

Each call to our server is followed by the same number of `echo` calls on the floor
server (bench/echo_server.py, a one-tool MCPServer on the same SDK), kept open for
the whole run, so every latency is also given as a ratio to a floor measured at the
same moment: on a shared, busy machine the ratio is the figure to read.

Writes BENCHMARKS.md (or --out PATH) and prints the same tables to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import logging
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, TextIO

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from mcp import Client, StdioServerParameters, stdio_client  # noqa: E402
from mcp.types import CallToolResult  # noqa: E402

from bench.peers.peers import PEERS, Peer, answer_size, result_text, tools_list_size, wire  # noqa: E402
from planning_core import FileStore, Task, TaskStatus  # noqa: E402

ECHO_SERVER = REPO / "bench" / "echo_server.py"
CLIENT_MODE = "legacy"
PLAN = "2026-01-01-bench"


# task-master-ai prints one non-JSON line on stdout at startup; the SDK skips it but
# logs a traceback. Keep the one-line message, drop the traceback.
def _no_traceback(record: logging.LogRecord) -> bool:
    record.exc_info, record.exc_text = None, None
    return True


logging.getLogger("mcp.client.stdio").addFilter(_no_traceback)


class BenchError(RuntimeError):
    pass


# -- configuration ---------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    sizes: tuple[int, ...]
    calls: int  # calls per operation per size
    startup_reps: int
    writers: tuple[int, ...]
    per_writer: int
    peer_target: int
    peer_budget: float  # seconds a peer may spend growing its task list
    peer_calls: int
    peer_writer_tasks: int


FULL = Config(
    sizes=(10, 100, 1_000, 10_000),
    calls=200,
    startup_reps=10,
    writers=(1, 2, 4, 8),
    per_writer=50,
    peer_target=1_000,
    peer_budget=60.0,
    peer_calls=200,
    peer_writer_tasks=25,
)
QUICK = Config(
    sizes=(10, 1_000),
    calls=20,
    startup_reps=2,
    writers=(1, 2),
    per_writer=10,
    peer_target=50,
    peer_budget=10.0,
    peer_calls=20,
    peer_writer_tasks=10,
)


# -- statistics ------------------------------------------------------------------------


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def p95(xs: list[float]) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, -(-95 * len(s) // 100) - 1))]  # nearest rank


@dataclass
class Series:
    """Latencies (seconds) of one operation, and of the echo calls made beside it."""

    ours: list[float] = field(default_factory=list)
    echo: list[float] = field(default_factory=list)

    @property
    def med(self) -> float:
        return median(self.ours)

    @property
    def p95(self) -> float:
        return p95(self.ours)

    @property
    def echo_med(self) -> float:
        return median(self.echo)

    @property
    def ratio(self) -> float:
        return self.med / self.echo_med


# -- servers ---------------------------------------------------------------------------


def ours_params(root: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "server", "--root", str(root)], cwd=str(REPO))


def echo_params(tag: str) -> StdioServerParameters:
    # The tag is ignored by the server; it makes the process findable in /proc.
    return StdioServerParameters(command=sys.executable, args=[str(ECHO_SERVER), "--bench-tag", tag], cwd=str(REPO))


def connect(params: StdioServerParameters, errlog: TextIO) -> Client:
    return Client(stdio_client(params, errlog=errlog), mode=CLIENT_MODE, cache=None)


def find_pid(marker: str) -> int | None:
    """The pid of the process whose command line contains `marker` (not us)."""
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if marker.encode() in argv:
            return int(entry.name)
    return None


def vm_kb(pid: int | None, key: str = "VmHWM") -> int | None:
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def check(result: CallToolResult, what: str) -> CallToolResult:
    if result.is_error:
        raise BenchError(f"{what}: {result_text(result)[:300]}")
    return result


# -- seeding ------------------------------------------------------------------------------


def subject(i: int) -> str:
    return f"Task {i}"  # the peers' workload uses the same subjects (bench/peers/peers.py)


def description(i: int) -> str:
    return f"Benchmark task number {i}: implement and test item {i}."


def seed_plan(root: Path, n: int) -> tuple[str, int]:
    """Write a plan with n tasks straight to disk (the contract's layout, through
    planning_core's models), much faster than n tool calls. Every third task is
    completed, task 2 is in progress, every tenth task is blocked by the one before.
    Returns the plan name and the id of a task with an open blocker."""
    store = FileStore(root)
    store.ensure_writable()
    path = store.todo / PLAN
    path.mkdir()
    (path / "plan.md").write_text(
        "# Benchmark plan\n\n## Analysis\n\nSeeded by bench/run.py.\n\n## Approach\n\nN/A\n\n## Steps\n\n"
    )
    now = "2026-01-01T00:00:00Z"
    for i in range(1, n + 1):
        status = TaskStatus.COMPLETED if i % 3 == 0 else TaskStatus.PENDING
        if i == 2:
            status = TaskStatus.IN_PROGRESS
        task = Task(
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
        (path / f"task_{i}.json").write_text(task.to_json())
    (path / ".highwatermark").write_text(f"{n}\n")
    return PLAN, 10


def count_task_files(root: Path, plan: str = PLAN) -> int:
    return sum(1 for n in os.listdir(root / "todo" / plan) if n.startswith("task_") and n.endswith(".json"))


# -- measurements ---------------------------------------------------------------------------


class Floor:
    """The echo server, open for the whole run; each `beside()` makes one echo call."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def call(self) -> float:
        t = time.perf_counter()
        check(await self.client.call_tool("echo", {"text": "hello"}), "echo")
        return time.perf_counter() - t


async def timed(coro: Awaitable[CallToolResult]) -> tuple[float, CallToolResult]:
    t = time.perf_counter()
    r = await coro
    return time.perf_counter() - t, r


@dataclass
class SizeResult:
    n: int
    ops: dict[str, Series]
    rss_kb: int | None = None
    list_text: int | None = None  # TaskList answer (limit 1,000): text characters
    list_structured: int | None = None  # ...and JSON of its structured content
    list_default_text: int | None = None  # TaskList with the default limit (200)
    list_default_structured: int | None = None
    tools: list[Any] = field(default_factory=list)  # the tools/list answer


OP_ORDER = [
    "TaskGet",
    "TaskList",
    "PlanList",
    "todo",
    "TaskCreate",
    "TaskUpdate status",
    "TaskUpdate addBlockedBy",
]

TODO_ITEMS = [
    {"content": "Read the failing test", "status": "completed"},
    {"content": "Fix the parser", "status": "in_progress", "activeForm": "Fixing the parser"},
    {"content": "Run the suite", "status": "pending"},
]


async def run_size(n: int, cfg: Config, floor: Floor, tmp: Path, log: TextIO) -> SizeResult:
    root = tmp / f"size-{n}"
    seed_plan(root, n)
    res = SizeResult(n=n, ops={op: Series() for op in OP_ORDER})
    calls = cfg.calls

    async with connect(ours_params(root), log) as c:
        res.tools = (await c.list_tools()).tools
        pid = find_pid(str(root))

        async def measure(op: str, args_for: Callable[[int], dict[str, Any]], tool: str) -> list[CallToolResult]:
            out = []
            s = res.ops[op]
            for i in range(calls):
                dt_, r = await timed(c.call_tool(tool, args_for(i)))
                check(r, f"{op} at {n} tasks")
                s.ours.append(dt_)
                s.echo.append(await floor.call())
                out.append(r)
            return out

        await measure("TaskGet", lambda i: {"taskId": (i * 7919) % n + 1}, "TaskGet")
        await measure("TaskList", lambda i: {"limit": 1000}, "TaskList")
        await measure("PlanList", lambda i: {}, "PlanList")
        await measure("todo", lambda i: {"items": TODO_ITEMS}, "todo")
        created = await measure(
            "TaskCreate", lambda i: {"subject": subject(n + i + 1), "description": description(n + i + 1)}, "TaskCreate"
        )
        ids = [r.structured_content["task"]["id"] for r in created]  # type: ignore[index]
        await measure("TaskUpdate status", lambda i: {"taskId": ids[i], "status": "in_progress"}, "TaskUpdate")
        # Seeded tasks never depend on the new ones, so no cycle; the cycle check still runs.
        await measure(
            "TaskUpdate addBlockedBy", lambda i: {"taskId": ids[i], "addBlockedBy": [(i * 31) % n + 1]}, "TaskUpdate"
        )

        if n in (100, 1_000) or n == max(cfg.sizes):
            # Context cost of TaskList: a plan of exactly n tasks (delete nothing: list the
            # first n ids, which are the seeded ones).
            r = check(await c.call_tool("TaskList", {"limit": min(n, 1000)}), "TaskList")
            res.list_text = len(result_text(r))
            res.list_structured = len(wire(r.structured_content))
            r = check(await c.call_tool("TaskList", {}), "TaskList")
            res.list_default_text = len(result_text(r))
            res.list_default_structured = len(wire(r.structured_content))
        res.rss_kb = vm_kb(pid)
    kept = count_task_files(root)
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


@dataclass
class WriterResult:
    k: int
    acked: int
    on_disk: int
    unique_ids: int
    seconds: float
    errors: list[str]

    @property
    def throughput(self) -> float:
        return self.acked / self.seconds


async def shared_writers(k: int, per_writer: int, tmp: Path, log: TextIO) -> WriterResult:
    """k server processes, one client each, all creating tasks in one plan at once."""
    root = tmp / f"writers-{k}"
    seed_plan(root, 0)
    go = asyncio.Event()
    ready = 0
    acked_ids: list[int] = []
    errors: list[str] = []
    t_start = t_end = 0.0

    async def writer(w: int) -> None:
        nonlocal ready
        async with connect(ours_params(root), log) as c:
            await c.list_tools()
            ready += 1
            await go.wait()
            for i in range(per_writer):
                r = await c.call_tool("TaskCreate", {"subject": f"W{w} task {i}", "description": description(i)})
                if r.is_error:
                    errors.append(result_text(r)[:200])
                else:
                    acked_ids.append(r.structured_content["task"]["id"])  # type: ignore[index]

    async def starter() -> None:
        nonlocal t_start
        while ready < k:
            await asyncio.sleep(0.01)
        t_start = time.perf_counter()
        go.set()

    tasks = [asyncio.create_task(writer(w)) for w in range(k)]
    st = asyncio.create_task(starter())
    await asyncio.gather(*tasks)
    t_end = time.perf_counter()
    await st
    return WriterResult(k, len(acked_ids), count_task_files(root), len(set(acked_ids)), t_end - t_start, errors)


# -- peers ------------------------------------------------------------------------------------


@dataclass
class PeerResult:
    name: str
    version: str | None
    skipped: str | None = None
    startup_s: float | None = None
    tools: int | None = None
    tools_chars: int | None = None
    size: int = 0
    grow_s: float = 0.0
    create: Series = field(default_factory=Series)
    update: Series = field(default_factory=Series)
    listing: Series = field(default_factory=Series)
    list_chars: int | None = None
    list_structured: bool = False
    writers_acked: int | None = None
    writers_kept: int | None = None  # None: the data file was unreadable
    notes: list[str] = field(default_factory=list)


async def run_peer(name: str, cfg: Config, floor: Floor, tmp: Path) -> PeerResult:
    cls = PEERS[name]
    res = PeerResult(name=name, version=cls.installed_version())
    if not cls.available():
        res.skipped = "not installed (bench/peers/install.sh)"
        return res
    workdir = tmp / f"peer-{name}"
    peer: Peer = cls(workdir)
    peer.prepare()
    with open(workdir / "stderr.log", "w") as errlog:
        t0 = time.perf_counter()
        async with peer.client(errlog=errlog, cache=None) as c:
            tools = (await c.list_tools()).tools
            res.startup_s = time.perf_counter() - t0
            res.tools, res.tools_chars = len(tools), tools_list_size(tools)

            ids: list[str] = []
            t_grow = time.perf_counter()
            tail = max(1, min(cfg.peer_calls, cfg.peer_target // 5))
            while len(ids) < cfg.peer_target and time.perf_counter() - t_grow < cfg.peer_budget:
                dt_, r = await timed(peer.create_task(c, len(ids)))
                ids += peer.task_ids(r)
                res.create.ours.append(dt_)
            res.grow_s = time.perf_counter() - t_grow
            res.size = len(ids)
            if res.size < cfg.peer_target:
                res.notes.append(f"reached {res.size} of {cfg.peer_target} tasks in the {cfg.peer_budget:.0f} s budget")
            # The create figure is that of the last `tail` creates (the plan near its final size).
            res.create.ours = res.create.ours[-tail:]
            for _ in res.create.ours:
                res.create.echo.append(await floor.call())

            t_upd = time.perf_counter()
            for tid in ids[: cfg.peer_calls]:
                if time.perf_counter() - t_upd > cfg.peer_budget / 2:
                    res.notes.append(f"status updates stopped after {len(res.update.ours)} calls (time budget)")
                    break
                dt_, _ = await timed(peer.set_status(c, tid, "in_progress"))
                res.update.ours.append(dt_)
                res.update.echo.append(await floor.call())

            t_list = time.perf_counter()
            for i in range(max(10, cfg.peer_calls // 10)):
                if i and time.perf_counter() - t_list > cfg.peer_budget / 4:
                    break
                dt_, r = await timed(peer.list_tasks(c))
                res.listing.ours.append(dt_)
                res.listing.echo.append(await floor.call())
                res.list_chars = answer_size(r)
                res.list_structured = r.structured_content is not None

        # Two server processes on one data dir / project root, 25 tasks each, at once.
        wdir = tmp / f"peer-{name}-writers"
        wpeer: Peer = cls(wdir)
        wpeer.prepare()
        acked: list[str] = []
        failed: dict[int, list[str]] = {0: [], 1: []}
        ready = asyncio.Event()
        started = 0

        async def writer(w: int) -> None:
            nonlocal started
            async with wpeer.client(errlog=errlog, cache=None) as wc:
                await wc.list_tools()
                started += 1
                if started == 2:
                    ready.set()
                await ready.wait()
                for i in range(cfg.peer_writer_tasks):
                    try:
                        r = await wpeer.create_task(wc, w * 1000 + i)
                        acked.extend(wpeer.task_ids(r))
                    except Exception as e:  # a refused write is simply not acknowledged
                        failed[w].append(str(e).strip().splitlines()[0][:100])

        await asyncio.gather(writer(0), writer(1))
        res.writers_acked = len(acked)
        res.writers_kept = wpeer.stored_task_count()
        for w, errs in failed.items():
            if errs:
                res.notes.append(f"2 writers: writer {w} had {len(errs)} creates not acknowledged (first: {errs[0]!r})")
        if res.writers_kept is None:
            res.notes.append("2 writers: the data file on disk was unreadable (not valid JSON) afterwards")
    return res


async def ours_two_writers(n: int, tmp: Path, log: TextIO) -> WriterResult:
    return await shared_writers(2, n, tmp / "peer-compare", log)


# -- the report ---------------------------------------------------------------------------------


def machine() -> dict[str, str]:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    os_name = platform.platform()
    with contextlib.suppress(OSError):
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                os_name = f"{line.split('=', 1)[1].strip(chr(34))} ({platform.system()} {platform.release()})"
    node = shutil.which("node")
    node_v = "absent"
    if node:
        with contextlib.suppress(Exception):
            node_v = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    mem = "?"
    with contextlib.suppress(OSError, ValueError, IndexError):
        kb = int(Path("/proc/meminfo").read_text().split("\n")[0].split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    return {
        "CPU": cpu,
        "cores": str(os.cpu_count()),
        "memory": mem,
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "OS": os_name,
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "mcp SDK": importlib_metadata.version("mcp"),
        "node": node_v,
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def ms(x: float | None) -> str:
    return "n/a" if x is None or x != x else f"{x * 1000:.2f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) + " |"  # noqa: E731
    return "\n".join([fmt(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *(fmt(r) for r in rows)])


@dataclass
class Report:
    cfg: Config
    quick: bool
    mach: dict[str, str]
    sizes: dict[int, SizeResult] = field(default_factory=dict)
    startup_ours: list[float] = field(default_factory=list)
    startup_echo: list[float] = field(default_factory=list)
    echo_rss_kb: int | None = None
    tools: int = 0
    tools_chars: int = 0
    writers: list[WriterResult] = field(default_factory=list)
    peers: list[PeerResult] = field(default_factory=list)
    ours_two: WriterResult | None = None
    disk: dict[str, Series] = field(default_factory=dict)  # durable-write floor, no MCP
    elapsed: float = 0.0

    def render(self) -> str:
        cfg = self.cfg
        lo, hi = min(self.sizes), max(self.sizes)
        main_n = 1_000 if 1_000 in self.sizes else hi
        out: list[str] = []
        targets: list[tuple[str, str, str, bool]] = []

        out.append("## Per-operation latency\n")
        out.append(
            f"{cfg.calls} calls per operation on a plan of {main_n:,} tasks (TaskList also at 100, with "
            "`limit: 1000`); ms; `× echo` = our median / the echo floor's median over the echo calls made "
            "right after each of ours. The last rows time, in the harness itself, the disk work the contract "
            "requires of every write (temp file + fsync, rename, folder fsync): 1 file for TaskUpdate, 2 for "
            "TaskCreate (the task and .highwatermark).\n"
        )
        rows = []
        main = self.sizes[main_n]
        for op in OP_ORDER:
            s = main.ops[op]
            rows.append([op, ms(s.med), ms(s.p95), ms(s.echo_med), f"{s.ratio:.2f}"])
        if 100 in self.sizes:
            s = self.sizes[100].ops["TaskList"]
            rows.insert(2, ["TaskList (100 tasks)", ms(s.med), ms(s.p95), ms(s.echo_med), f"{s.ratio:.2f}"])
        all_echo = [x for r in self.sizes.values() for s in r.ops.values() for x in s.echo]
        rows.append(["echo (floor, all calls)", ms(median(all_echo)), ms(p95(all_echo)), ms(median(all_echo)), "1.00"])
        for label, s in self.disk.items():
            rows.append([f"durable write, {label} (no MCP)", ms(s.med), ms(s.p95), ms(s.echo_med), f"{s.ratio:.2f}"])
        out.append(table(["operation", "median", "p95", "echo median", "× echo"], rows))

        if self.disk:
            parts = []
            for op, label in (("TaskCreate", "2 files"), ("TaskUpdate status", "1 file")):
                s = main.ops[op]
                d = self.disk[label].med
                rest = s.med - s.echo_med - d
                parts.append(
                    f"{op} {ms(s.med)} ms = echo {ms(s.echo_med)} + durable write ({label}) {ms(d)} + "
                    f"the rest (planner, lock, re-read, SDK validation) {ms(rest)}; "
                    f"without the disk floor it would be {(s.med - d) / s.echo_med:.2f}× echo"
                )
            out.append("\nWhere a write's time goes (medians): " + "; ".join(parts) + ".")
        out.append("\n\n## Growth: median ms (× echo) by tasks in the plan\n")
        header = ["operation", *(f"{n:,} tasks" for n in sorted(self.sizes)), f"{hi:,}/{lo:,}"]
        rows = []
        growth: dict[str, float] = {}
        for op in OP_ORDER:
            cells = [op]
            for n in sorted(self.sizes):
                s = self.sizes[n].ops[op]
                cells.append(f"{ms(s.med)} ({s.ratio:.2f})")
            g = self.sizes[hi].ops[op].med / self.sizes[lo].ops[op].med
            growth[op] = g
            cells.append(f"{g:.2f}")
            rows.append(cells)
        out.append(table(header, rows))
        out.append(
            "\nEach size is a fresh server on a plan seeded on disk with that many tasks; the operations run "
            "in the order listed (reads on exactly n tasks, then the creates take the plan to n + "
            f"{cfg.calls}). Growth ratio = median at {hi:,} / median at {lo:,}."
        )

        st_o, st_e = median(self.startup_ours), median(self.startup_echo)
        out.append("\n\n## Start-up, memory, context cost\n")
        rss = self.sizes[hi].rss_kb
        lt = self.sizes[main_n]
        rows = [
            [
                f"start-up: process start → first tools/list answer (median of {len(self.startup_ours)}, empty root)",
                f"{ms(st_o)} ms",
                f"{ms(st_e)} ms",
                f"{st_o / st_e:.2f}",
            ],
            [
                f"peak RSS (VmHWM) after the {hi:,}-task run",
                f"{rss / 1024:.1f} MiB" if rss else "n/a",
                f"{self.echo_rss_kb / 1024:.1f} MiB" if self.echo_rss_kb else "n/a",
                f"{rss / self.echo_rss_kb:.2f}" if rss and self.echo_rss_kb else "n/a",
            ],
            [
                "tools/list answer (json of the tools as sent)",
                f"{self.tools_chars:,} chars ({self.tools} tools)",
                "",
                "",
            ],
            [
                f"TaskList of {min(main_n, 1000):,} tasks (limit 1000): text / structured",
                f"{lt.list_text:,} / {lt.list_structured:,} chars",
                "",
                "",
            ],
            [
                f"TaskList on {main_n:,} tasks, default limit (200): text / structured",
                f"{lt.list_default_text:,} / {lt.list_default_structured:,} chars",
                "",
                "",
            ],
        ]
        out.append(table(["figure", "planning-mcp", "echo floor", "ratio"], rows))

        out.append("\n\n## Shared writers: K server processes creating tasks in one plan at once\n")
        rows = []
        for w in self.writers:
            rows.append(
                [
                    str(w.k),
                    f"{w.k} × {self.cfg.per_writer}",
                    f"{w.throughput:.0f}",
                    f"{w.acked}",
                    f"{w.on_disk}",
                    f"{w.unique_ids}",
                    "yes" if w.on_disk == w.acked == w.unique_ids else "NO",
                    str(len(w.errors)),
                ]
            )
        out.append(
            table(
                ["K", "creates", "tasks/s", "acknowledged", "files on disk", "distinct ids", "all kept", "refused"],
                rows,
            )
        )

        if self.peers:
            out.append("\n\n## Peers (same SDK client, same workload)\n")
            names = [p.name for p in self.peers]
            live = [p for p in self.peers if not p.skipped]
            header = ["figure", "planning-mcp", *(f"{p.name} {p.version or ''}".strip() for p in self.peers)]

            def cell(p: PeerResult, f: Callable[[PeerResult], str]) -> str:
                return f"skipped: {p.skipped}" if p.skipped else f(p)

            o = self.sizes[main_n]
            rows = [
                [
                    "tasks reached",
                    f"{main_n:,} (seeded)",
                    *(cell(p, lambda p: f"{p.size:,} in {p.grow_s:.0f} s") for p in self.peers),
                ],
                [
                    "create, median / p95 ms (× echo)",
                    f"{ms(o.ops['TaskCreate'].med)} / {ms(o.ops['TaskCreate'].p95)} ({o.ops['TaskCreate'].ratio:.2f})",
                    *(
                        cell(p, lambda p: f"{ms(p.create.med)} / {ms(p.create.p95)} ({p.create.ratio:.2f})")
                        for p in self.peers
                    ),
                ],
                [
                    "status → in progress, median / p95 ms (× echo)",
                    f"{ms(o.ops['TaskUpdate status'].med)} / {ms(o.ops['TaskUpdate status'].p95)} "
                    f"({o.ops['TaskUpdate status'].ratio:.2f})",
                    *(
                        cell(p, lambda p: f"{ms(p.update.med)} / {ms(p.update.p95)} ({p.update.ratio:.2f})")
                        for p in self.peers
                    ),
                ],
                [
                    "list all, median ms (× echo)",
                    f"{ms(o.ops['TaskList'].med)} ({o.ops['TaskList'].ratio:.2f})",
                    *(cell(p, lambda p: f"{ms(p.listing.med)} ({p.listing.ratio:.2f})") for p in self.peers),
                ],
                [
                    "list answer, chars (text + structured)",
                    f"{(o.list_text or 0) + (o.list_structured or 0):,}",
                    *(
                        cell(p, lambda p: f"{p.list_chars:,}" + ("" if p.list_structured else " (text only)"))
                        for p in self.peers
                    ),
                ],
                [
                    "tools/list, chars (tools)",
                    f"{self.tools_chars:,} ({self.tools})",
                    *(cell(p, lambda p: f"{p.tools_chars:,} ({p.tools})") for p in self.peers),
                ],
                [
                    "start-up → tools/list, ms",
                    ms(st_o),
                    *(cell(p, lambda p: ms(p.startup_s) + " (1 run)") for p in self.peers),
                ],
                [
                    f"2 concurrent writers × {self.cfg.peer_writer_tasks}: kept / acknowledged",
                    f"{self.ours_two.on_disk} / {self.ours_two.acked}" if self.ours_two else "n/a",
                    *(
                        cell(
                            p,
                            lambda p: (
                                f"{'unreadable' if p.writers_kept is None else p.writers_kept} / {p.writers_acked}"
                            ),
                        )
                        for p in self.peers
                    ),
                ],
            ]
            out.append(table(header, rows))
            for p in live:
                for note in dict.fromkeys(p.notes):
                    out.append(f"\n- {p.name}: {note}")
            out.append(
                "\n\nPeer create/status figures are the last "
                f"{min(cfg.peer_calls, max(1, cfg.peer_target // 5))} creates (the list near its final size) and "
                f"status changes on the first {cfg.peer_calls} tasks at that size; list is the whole list. "
                "planning-mcp's column is its "
                f"{main_n:,}-task run above. shrimp creates with split_tasks(updateMode=append) and sets "
                "in-progress with execute_task; task-master-ai uses add_task (manual, no AI) and set_task_status."
                f" Names: {', '.join(names)}."
            )

        # targets
        g = main
        targets = [
            ("TaskGet median ≤ 1.5× echo", f"{g.ops['TaskGet'].ratio:.2f}×", g.ops["TaskGet"].ratio <= 1.5),
            (
                "TaskUpdate (status) median ≤ 1.5× echo",
                f"{g.ops['TaskUpdate status'].ratio:.2f}×",
                g.ops["TaskUpdate status"].ratio <= 1.5,
            ),
            (
                "TaskUpdate (addBlockedBy) median ≤ 1.5× echo",
                f"{g.ops['TaskUpdate addBlockedBy'].ratio:.2f}×",
                g.ops["TaskUpdate addBlockedBy"].ratio <= 1.5,
            ),
            ("TaskCreate median ≤ 2× echo", f"{g.ops['TaskCreate'].ratio:.2f}×", g.ops["TaskCreate"].ratio <= 2.0),
            (f"create {hi:,}/{lo:,} ≤ 1.3", f"{growth['TaskCreate']:.2f}", growth["TaskCreate"] <= 1.3),
            (
                f"update (status) {hi:,}/{lo:,} ≤ 1.3",
                f"{growth['TaskUpdate status']:.2f}",
                growth["TaskUpdate status"] <= 1.3,
            ),
            ("start-up ≤ 1.2× floor", f"{st_o / st_e:.2f}×", st_o / st_e <= 1.2),
            ("tools/list ≤ 6,000 chars", f"{self.tools_chars:,}", self.tools_chars <= 6000),
            (
                "TaskList of 1,000 tasks ≤ 40 KB text",
                f"{(lt.list_text or 0) / 1000:.1f} KB" + ("" if main_n == 1000 else f" (at {main_n:,})"),
                (lt.list_text or 0) <= 40_000,
            ),
        ]
        head = [
            "# planning-mcp benchmarks\n",
            "Generated by `python -m bench.run"
            + (" --quick" if self.quick else "")
            + (" --peers" if self.peers else "")
            + f"` in {self.elapsed:.0f} s. Every server runs as a subprocess driven by the SDK's own client "
            f"(`mcp.Client`, mode `{CLIENT_MODE}`: the 2025 initialize handshake; the peers speak only that, "
            "and for ours and the floor it is as fast as `auto` on stdio) over stdio. The floor is "
            "`bench/echo_server.py`, a one-tool MCPServer on the same SDK; each of our calls is followed by "
            "an echo call, so ratios to the floor compare like with like on a noisy machine.\n",
            "## Machine\n",
            table(["", ""], [[k, v] for k, v in self.mach.items()]),
            "\n\n## Targets\n",
            table(["target", "measured", "status"], [[t, m, "met" if ok else "MISSED"] for t, m, ok in targets]),
            "\n\n",
        ]
        if self.quick:
            head.insert(1, "**Quick mode** (small sizes and few calls: a smoke run, not a measurement).\n")
        return "\n".join(head) + "\n".join(out) + "\n"


# -- main -----------------------------------------------------------------------------------------


async def main_async(args: argparse.Namespace) -> Report:
    cfg = QUICK if args.quick else FULL
    if args.sizes:
        cfg = Config(**{**cfg.__dict__, "sizes": tuple(args.sizes)})
    report = Report(cfg=cfg, quick=args.quick, mach=machine())
    t0 = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="planning-bench-"))
    logpath = tmp / "servers-stderr.log"
    try:
        with open(logpath, "w") as log:
            say = lambda *a: print(*a, file=sys.stderr, flush=True)  # noqa: E731

            say(f"[bench] start-up × {cfg.startup_reps} (ours and the floor, alternating)")
            empty = tmp / "empty-root"
            for _ in range(cfg.startup_reps):
                report.startup_echo.append(await startup(lambda: echo_params("startup"), log))
                shutil.rmtree(empty, ignore_errors=True)
                report.startup_ours.append(await startup(lambda: ours_params(empty), log))

            tag = uuid.uuid4().hex
            async with connect(echo_params(tag), log) as ec:
                await ec.list_tools()
                floor = Floor(ec)
                echo_pid = find_pid(tag)
                for _ in range(20):  # warm-up
                    await floor.call()

                for n in cfg.sizes:
                    say(f"[bench] {n:,} tasks: {len(OP_ORDER)} operations × {cfg.calls} calls")
                    report.sizes[n] = await run_size(n, cfg, floor, tmp, log)
                report.echo_rss_kb = vm_kb(echo_pid)
                say(f"[bench] durable-write floor × {cfg.calls}")
                for files, label in ((1, "1 file"), (2, "2 files")):
                    s = Series()
                    for t in durable_write_floor(tmp / "fsync", files, cfg.calls):
                        s.ours.append(t)
                        s.echo.append(await floor.call())
                    report.disk[label] = s
                tools = report.sizes[cfg.sizes[0]].tools
                report.tools, report.tools_chars = len(tools), tools_list_size(tools)

                if args.peers:
                    for name in PEERS:
                        say(f"[bench] peer {name}")
                        try:
                            report.peers.append(await run_peer(name, cfg, floor, tmp))
                        except Exception as e:  # a broken peer must not sink the run
                            report.peers.append(
                                PeerResult(name, PEERS[name].installed_version(), skipped=f"failed: {e!r}"[:200])
                            )
                    say("[bench] planning-mcp: 2 concurrent writers (peer comparison)")
                    report.ours_two = await ours_two_writers(cfg.peer_writer_tasks, tmp, log)

            for k in cfg.writers:
                say(f"[bench] shared writers K={k} × {cfg.per_writer}")
                report.writers.append(await shared_writers(k, cfg.per_writer, tmp, log))
    finally:
        if args.keep:
            print(f"[bench] kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    report.elapsed = time.perf_counter() - t0
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and few calls (< 60 s); a smoke run")
    ap.add_argument("--peers", action="store_true", help="also run the installed peer servers")
    ap.add_argument("--out", type=Path, default=REPO / "BENCHMARKS.md", help="where to write the report")
    ap.add_argument("--sizes", type=int, nargs="+", help="override the plan sizes")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder (roots, server stderr)")
    args = ap.parse_args(argv)
    report = asyncio.run(main_async(args))
    text = report.render()
    print(text)
    args.out.write_text(text)
    print(f"[bench] wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
