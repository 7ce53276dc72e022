"""The planning-mcp benchmark harness.

    python -m bench.run [--quick] [--peers] [--boards] [--no-team] [--out PATH]      (from the repo root)
    python bench/run.py  [--quick] [--peers] [--boards] [--no-team] [--out PATH]

Every server (ours, the echo floor, the peers) is a real subprocess driven by the
real SDK client (`mcp.Client`) over stdio, in the 2025 `legacy` mode (initialize
handshake): the peers speak only that, and on stdio it is as fast as `auto` for
ours and the floor, so one mode serves everyone. The client's response cache is off.

Each call to our server is followed by the same number of `echo` calls on the floor
server (bench/echo_server.py, the smallest MCPServer on the same SDK), kept open for
the whole run, so every latency is also given as a ratio to a floor measured at the
same moment: on a shared, busy machine the ratio is the figure to read. Each write is
also set beside the floor server's `durable_write` tool: the contract's disk work alone,
through the SDK, on a plan folder of the same size.

Writes BENCHMARKS.md (or --out PATH) and prints the same tables to stdout.

This module is the CLI and the order of the run; the pieces live beside it:
config (how much work), servers (starting and reaching them), measure (series and the
floor), workloads (our server's runs), service (PlanList over 10 plans, change notices,
idle CPU), board_streams (TaskList beside open board pages, with --boards), pgcluster
(the throwaway PostgreSQL for the PostgreSQL column), shared_writers, peers_run, machine,
team (a team of agents on one plan: here only K = 16, both ways and stores, bench.team.TEAM_IN_FULL_RUN,
a few minutes; --quick: K = 2 on 20 tasks; `python -m bench.team` alone runs K = 1, 4, 16, 32),
report (+ report_targets, report_peers, mdtable; the history of how the figures moved is
hand-written in docs/history.md).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

# `python bench/run.py` puts bench/, not the repo root, on sys.path; the imports below need the root.
REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.board_streams import run_board_streams  # noqa: E402
from bench.config import FULL, QUICK, Config  # noqa: E402
from bench.history_read import history_reads, history_section  # noqa: E402
from bench.lock_handover import lock_handovers, lock_section  # noqa: E402
from bench.machine import machine  # noqa: E402
from bench.measure import Floor, Series  # noqa: E402
from bench.peers.peers import PEERS, tools_list_size  # noqa: E402
from bench.peers_run import PeerResult, ours_filled, ours_two_writers, run_peer  # noqa: E402
from bench.pgcluster import throwaway_database  # noqa: E402
from bench.report import Report  # noqa: E402
from bench.servers import connect, echo_params, find_pid, ours_params, vm_kb  # noqa: E402
from bench.service import run_service  # noqa: E402
from bench.shared_writers import shared_writers  # noqa: E402
from bench.team import TEAM_IN_FULL_RUN, TEAM_IN_QUICK_RUN, team_bench  # noqa: E402

HISTORY_TASKS, HISTORY_EVENTS = 10_000, 100_000  # the history-reads section's plan
from bench.workloads import OP_ORDER, WRITE_FILES, durable_write_floor, run_size, startup  # noqa: E402


# task-master-ai prints one non-JSON line on stdout at startup; the SDK skips it but
# logs a traceback. Keep the one-line message, drop the traceback.
def _no_traceback(record: logging.LogRecord) -> bool:
    record.exc_info, record.exc_text = None, None
    return True


logging.getLogger("mcp.client.stdio").addFilter(_no_traceback)


def say(*a: Any) -> None:
    """Progress, on stderr so stdout carries only the report."""
    print(*a, file=sys.stderr, flush=True)


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
                await floor.warm_up()

                for n in cfg.sizes:
                    say(f"[bench] {n:,} tasks: {len(OP_ORDER)} operations + the write floor × {cfg.calls} calls")
                    report.sizes[n] = await run_size(n, cfg, floor, tmp, log)
                report.echo_rss_kb = vm_kb(echo_pid)
                say(f"[bench] durable-write floor in the harness × {cfg.calls}")
                for label, files in WRITE_FILES.items():
                    s = Series()
                    for t in durable_write_floor(tmp / "fsync", files, cfg.calls):
                        s.ours.append(t)
                        s.echo.append(await floor.call())
                    report.disk[label] = s
                tools = report.sizes[cfg.sizes[0]].tools
                report.tools, report.tools_chars = len(tools), tools_list_size(tools)

                say(f"[bench] service: PlanList over 10 plans, change notices, idle CPU ({cfg.idle_seconds:.0f} s)")
                report.service = await run_service(cfg.calls, cfg.idle_seconds, cfg.notice_writes, floor, tmp, log)

                if not args.no_pg:
                    n = report.main_n
                    say(f"[bench] PostgreSQL store: {n:,} tasks, {len(OP_ORDER)} operations × {cfg.calls} calls")
                    with throwaway_database() as url:
                        report.pg = await run_size(n, cfg, floor, tmp / "pg", log, store_url=url)

                if args.peers:
                    say("[bench] planning-mcp filled through TaskCreate (peer comparison)")
                    report.ours_peer = await ours_filled(cfg, floor, tmp, log)
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

            if args.boards:
                b = cfg.boards
                say(f"[bench] {b.streams} board streams on a {b.tasks:,}-task plan, TaskList × {b.calls} per series")
                report.boards = await run_board_streams(b.streams, b.tasks, b.calls, b.quiet, tmp, log)

            for k in cfg.writers:
                say(f"[bench] shared writers K={k} × {cfg.per_writer}")
                report.writers.append(await shared_writers(k, cfg.per_writer, tmp, log))

        await _history_and_team(args, report, tmp)
    finally:
        if args.keep:
            print(f"[bench] kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    report.elapsed = time.perf_counter() - t0
    return report


LOCK_WRITERS = 16


async def _history_and_team(args: argparse.Namespace, report: Report, tmp: Path) -> None:
    if not args.quick:
        say(f"[bench] history reads: {HISTORY_TASKS:,} tasks, {HISTORY_EVENTS:,} events")
        figures = history_reads(HISTORY_TASKS, HISTORY_EVENTS, 20, postgres=not args.no_pg)
        report.history = history_section(figures, HISTORY_TASKS, HISTORY_EVENTS)
        say(f"[bench] the plan lock's hand-over: {LOCK_WRITERS} writers")
        report.lock = lock_section(lock_handovers(LOCK_WRITERS), LOCK_WRITERS)
    if not args.no_team:
        team = TEAM_IN_QUICK_RUN if args.quick else TEAM_IN_FULL_RUN
        if args.no_pg:
            team = replace(team, stores=("file",))
        say(f"[bench] a team of agents on one plan: K = {team.ks}, {team.tasks:,} tasks, {', '.join(team.stores)}")
        report.team = await team_bench(team, tmp / "team")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and few calls (< 60 s); a smoke run")
    ap.add_argument("--peers", action="store_true", help="also run the installed peer servers")
    ap.add_argument("--out", type=Path, default=REPO / "BENCHMARKS.md", help="where to write the report")
    ap.add_argument("--sizes", type=int, nargs="+", help="override the plan sizes")
    ap.add_argument("--boards", action="store_true", help="also time TaskList beside open board streams")
    ap.add_argument("--no-pg", action="store_true", help="leave out the PostgreSQL column (no cluster started)")
    ap.add_argument("--no-team", action="store_true", help="leave out the team-of-agents section (bench.team)")
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
