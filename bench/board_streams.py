"""Open boards against the tools: TaskList's median on a big plan with many board pages
streaming from the same server, and with none.

    python -m bench.board_streams [--streams 150] [--tasks 2000] [--calls 40] [--quiet 20]
    python -m bench.run --boards ...        (the same, as a section of BENCHMARKS.md)

One `planning-mcp serve --transport http` child on a seeded plan. TaskList (the default
page) is timed through the SDK's client over HTTP three times: with no board open, with
`--streams` raw `GET /board/events` connections open (each read by one thread, so none
backs up), and with none again (the two "none" series bracket the other, for the
machine's drift). While the streams are open and nothing changes, the server's CPU is
read from /proc for `--quiet` seconds (and for as long with none open); then one
TaskUpdate is timed to the moment every stream has the new board."""

from __future__ import annotations

import argparse
import asyncio
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from mcp import Client  # noqa: E402

from bench.config import FULL  # noqa: E402
from bench.mdtable import ms, table  # noqa: E402
from bench.measure import median  # noqa: E402
from bench.servers import CLIENT_MODE, check, vm_kb  # noqa: E402
from bench.workloads import PLAN, seed_plan  # noqa: E402
from tests.support.procs import HOST, answer_start  # noqa: E402

START_WAIT = 120.0  # bounds on "never hangs", on a busy machine
STREAM_WAIT = 120.0
BOARD_EVENT = b"event: board\n"


@dataclass
class BoardStreamsResult:
    streams: int
    tasks: int
    calls: int
    quiet: float
    none_before: list[float] = field(default_factory=list)
    with_streams: list[float] = field(default_factory=list)
    none_after: list[float] = field(default_factory=list)
    admitted: int = 0
    refused: int = 0
    cpu_none: float = 0.0  # fraction of one core, nothing changing
    cpu_streams: float = 0.0
    rss_none_kb: int | None = None
    rss_streams_kb: int | None = None
    change_to_all: float = 0.0  # seconds from a TaskUpdate's answer to every stream having the new board

    @property
    def none_med(self) -> float:
        return median(self.none_before + self.none_after)

    @property
    def ratio(self) -> float:
        return median(self.with_streams) / self.none_med


class Streams:
    """`count` raw requests for /board/events, all sent before any answer is read; the
    admitted ones kept open, each counted by the board events it got."""

    def __init__(self, port: int, count: int) -> None:
        request = f"GET /board/events HTTP/1.1\r\nHost: {HOST}:{port}\r\n\r\n".encode()
        sent = []
        for _ in range(count):
            s = socket.create_connection((HOST, port), timeout=STREAM_WAIT)
            s.sendall(request)
            sent.append(s)
        self.sockets: list[socket.socket] = []
        self.refused = 0
        self._selector = selectors.DefaultSelector()
        self.boards: list[int] = []
        self._tails: list[bytes] = []
        for s in sent:
            status, rest = answer_start(s)
            if status != 200:
                self.refused += 1
                s.close()
                continue
            self._selector.register(s, selectors.EVENT_READ, len(self.sockets))
            self.sockets.append(s)
            self.boards.append(rest.count(BOARD_EVENT))
            self._tails.append(rest[-(len(BOARD_EVENT) - 1) :])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._selector.select(0.2):
                i = key.data
                chunk = key.fileobj.recv(1 << 20)  # type: ignore[union-attr]
                if not chunk:
                    self._selector.unregister(key.fileobj)
                    continue
                text = self._tails[i] + chunk
                self.boards[i] += text.count(BOARD_EVENT)
                self._tails[i] = text[-(len(BOARD_EVENT) - 1) :]

    def wait_all(self, at_least: int) -> None:
        deadline = time.monotonic() + STREAM_WAIT
        while min(self.boards) < at_least:
            if time.monotonic() > deadline:
                raise RuntimeError(f"streams without board {at_least}: {sum(b < at_least for b in self.boards)}")
            time.sleep(0.01)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for s in self.sockets:
            s.close()


def cpu_ticks(pid: int) -> int:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


async def core_fraction(pid: int, seconds: float) -> float:
    a = cpu_ticks(pid)
    await asyncio.sleep(seconds)
    return (cpu_ticks(pid) - a) / os.sysconf("SC_CLK_TCK") / seconds


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def start_server(root: Path, port: int, log: Any) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "server", "serve", "--transport", "http", "--port", str(port), "--root", str(root)]
    proc = subprocess.Popen(args, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + START_WAIT
    while True:
        try:
            socket.create_connection((HOST, port), timeout=1).close()
            return proc
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"the server did not start (exit {proc.poll()})") from None
            time.sleep(0.05)


async def task_list_series(c: Client, calls: int) -> list[float]:
    out = []
    for _ in range(calls):
        t = time.perf_counter()
        check(await c.call_tool("TaskList", {"plan": PLAN}), "TaskList")
        out.append(time.perf_counter() - t)
    return out


async def run_board_streams(
    streams: int, tasks: int, calls: int, quiet: float, tmp: Path, log: Any
) -> BoardStreamsResult:
    r = BoardStreamsResult(streams, tasks, calls, quiet)
    root = tmp / "boards"
    seed_plan(root, tasks)
    port = free_port()
    proc = start_server(root, port, log)
    try:
        async with Client(f"http://{HOST}:{port}/mcp", mode=CLIENT_MODE, cache=None) as c:
            await task_list_series(c, 5)  # warm: the plan's index built, the code paths loaded
            r.none_before = await task_list_series(c, calls)
            r.cpu_none = await core_fraction(proc.pid, quiet)
            r.rss_none_kb = vm_kb(proc.pid, "VmRSS")
            open_ = await asyncio.to_thread(Streams, port, streams)
            try:
                r.admitted, r.refused = len(open_.sockets), open_.refused
                await asyncio.to_thread(open_.wait_all, 1)
                r.with_streams = await task_list_series(c, calls)
                r.cpu_streams = await core_fraction(proc.pid, quiet)
                r.rss_streams_kb = vm_kb(proc.pid, "VmRSS")
                seen = min(open_.boards)
                check(await c.call_tool("TaskUpdate", {"plan": PLAN, "taskId": 1, "subject": "Renamed"}), "write")
                t = time.perf_counter()
                await asyncio.to_thread(open_.wait_all, seen + 1)
                r.change_to_all = time.perf_counter() - t
            finally:
                open_.close()
            await asyncio.sleep(1.0)  # the server sees the streams go
            r.none_after = await task_list_series(c, calls)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    return r


def board_streams_section(r: BoardStreamsResult) -> list[str]:
    rows = [
        ["TaskList median, no board open", f"{ms(r.none_med)} ms", f"{r.cpu_none * 100:.1f}%", kb(r.rss_none_kb)],
        [
            f"TaskList median, {r.admitted} board streams open",
            f"{ms(median(r.with_streams))} ms ({r.ratio:.2f}× none)",
            f"{r.cpu_streams * 100:.1f}%",
            kb(r.rss_streams_kb),
        ],
    ]
    verdict = "met" if r.ratio <= 2.0 else "MISSED"
    return [
        f"## Open boards: {r.streams} event streams on a {r.tasks:,}-task plan\n",
        f"`python -m bench.board_streams` (or `bench.run --boards`): one `serve --transport http` child; TaskList "
        f"(default page, {r.calls} calls per series, over HTTP) with no board open (before and after), and with "
        f"{r.streams} raw `GET /board/events` sent at once ({r.admitted} admitted, the bound; {r.refused} "
        "refused with 503) and the admitted ones open, each given the board. Server "
        f"CPU over {r.quiet:.0f} s with nothing changing. Target: TaskList within 2× of none: **{verdict}**.\n",
        table(["", "latency", "server CPU, idle", "server RSS"], rows),
        f"\nOne TaskUpdate reached all {r.admitted} streams {ms(r.change_to_all)} ms after its answer "
        "(one build of the board, shared by every stream).\n",
    ]


def kb(value: int | None) -> str:
    return f"{value / 1024:.0f} MiB" if value else "?"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench.board_streams", description=__doc__.split("\n\n")[0])
    full = FULL.boards
    ap.add_argument("--streams", type=int, default=full.streams)
    ap.add_argument("--tasks", type=int, default=full.tasks)
    ap.add_argument("--calls", type=int, default=full.calls)
    ap.add_argument("--quiet", type=float, default=full.quiet, help="seconds the idle CPU is read over")
    a = ap.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="planning-bench-boards-") as tmp,
        open(Path(tmp) / "server.log", "w") as log,
    ):
        r = asyncio.run(run_board_streams(a.streams, a.tasks, a.calls, a.quiet, Path(tmp), log))
    print("\n".join(board_streams_section(r)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
