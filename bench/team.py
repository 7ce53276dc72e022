"""The team benchmark: K agents (real MCP sessions, each its own planning-mcp stdio server
process and owner) work one seeded 1,000-task plan until it is done, while a random
working agent's server is `kill -9`ed every few seconds and replaced; its lease must run
out and its task be taken over. The new way (`TaskUpdate taskId="next"`) and the old way
(`TaskList status=ready`, claim the first by id, list again on a refusal) side by side,
on the file store (one host, the servers sharing one --root) and on PostgreSQL with the
servers on three hosts (network namespaces on a bridge: tests/support/netns.py).

    python -m bench.team [--quick] [--k 1 4 16 32] [--tasks 1000] [--work-seconds S]
                         [--lease-floor S] [--stores file pg] [--ways new old] [--out BENCHMARKS.md | --no-write]

Prints the table and writes its section of BENCHMARKS.md (replacing the one there);
`python -m bench.run` runs a smaller set (TEAM_IN_FULL_RUN / TEAM_IN_QUICK_RUN) into the
whole file. The pieces: team_plan (the graph, durations, the bound, seeding), team_agents
(the agents and the killer), team_check (the judging), team_report (the section)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, TextIO

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import psycopg  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402

from bench.machine import busy_share, quiet_note  # noqa: E402
from bench.servers import connect  # noqa: E402
from bench.team_agents import MARKER, NEXT, WAYS, TeamSetup, kill_leftovers, run_team  # noqa: E402
from bench.team_check import TeamResult, Twice, judge  # noqa: E402
from bench.team_config import STORES, TEAM_IN_FULL_RUN, TEAM_IN_QUICK_RUN, TEAM_QUICK, TeamConfig  # noqa: E402,F401
from bench.team_plan import TeamPlan, lease_for, make_plan, seed_team_plan  # noqa: E402
from bench.team_report import TARGET_K, replace_section, team_section  # noqa: E402
from planning_core.stores import open_store  # noqa: E402

HOSTS = 3  # the PostgreSQL servers' hosts


def say(*a: object) -> None:
    print(*a, file=sys.stderr, flush=True)


ServerCmd = Callable[[int, str], StdioServerParameters]


@dataclass
class StoreSite:
    """Where one store's runs happen: a fresh store URL per run, and each agent's server command."""

    kind: str
    new_url: Callable[[str], str]  # run name -> a fresh, empty store
    command: Callable[[str], ServerCmd]  # store url -> (slot, marker) -> the server's command
    hosts: str  # what the servers run on, for the report


def _params(argv: list[str]) -> StdioServerParameters:
    return StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(REPO))


def file_site(tmp: Path) -> StoreSite:
    def new_url(run: str) -> str:
        return str(tmp / f"root-{run}")

    def command(url: str) -> ServerCmd:
        return lambda slot, marker: _params([sys.executable, "-X", marker, "-m", "server", "--root", url])

    return StoreSite("file", new_url, command, "1 host: every server on one --root")


@contextlib.contextmanager
def pg_site() -> Iterator[StoreSite]:
    """A cluster on a bridge and HOSTS network namespaces (removed on the way out, whatever
    happened); agent i's server runs on host i mod HOSTS."""
    from tests.support.netns import bridge_cluster, network
    from tests.support.pg import with_database

    with network(HOSTS) as net, bridge_cluster(net) as cluster:

        def new_url(run: str) -> str:
            with psycopg.connect(cluster.url, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{run}"')
            return with_database(cluster.url, run)

        def command(url: str) -> ServerCmd:
            def at(slot: int, marker: str) -> StdioServerParameters:
                host = net.hosts[slot % len(net.hosts)]
                store = host.database_url(url)
                return _params(host.wrap([sys.executable, "-X", marker, "-m", "server", "--store", store]))

            return at

        yield StoreSite("pg", new_url, command, net.describe())


def final_statuses(url: str, plan: str) -> dict[int, str]:
    store = open_store(url)
    try:
        return {i: t.status.value for i, t in store.snapshot(plan).tasks.items()}
    finally:
        store.close()


async def new_way_available(site: StoreSite, errlog: TextIO) -> str:
    """'' when the server claims with taskId "next"; else its answer (the new way is then not measured)."""
    plan = make_plan(4, 1)
    url = site.new_url(f"probe_{uuid.uuid4().hex[:8]}")
    name = seed_team_plan(url, plan)
    tag = f"{MARKER}=probe-{uuid.uuid4().hex[:8]}"
    async with connect(site.command(url)(0, tag), errlog) as c:
        args = {"plan": name, "taskId": NEXT, "status": "in_progress", "owner": "probe", "leaseSeconds": 5}
        r = await c.call_tool("TaskUpdate", args)
    if r.is_error:
        return "".join(getattr(b, "text", "") for b in r.content)[:200]
    return ""


async def one_run(site: StoreSite, way: str, k: int, plan: TeamPlan, cfg: TeamConfig, errlog: TextIO) -> TeamResult:
    run = f"team_{site.kind}_{way}_{k}_{uuid.uuid4().hex[:6]}"
    url = site.new_url(run)
    name = seed_team_plan(url, plan)
    durations = plan.durations(k, cfg.work_seconds)
    setup = TeamSetup(
        way=way,
        k=k,
        plan=name,
        durations=durations,
        lease=lease_for(durations, cfg.lease_floor, cfg.heartbeat),
        heartbeat=cfg.heartbeat,
        server=site.command(url),
        kill_every=cfg.kill_every,
        seed=cfg.seed + k,
        errlog=errlog,
        run_tag=run,
    )
    try:
        team, finished = await run_team(setup, cfg.run_timeout())
    finally:
        kill_leftovers(run)
    return judge(plan, team, finished, final_statuses(url, name), site.kind)


async def measured_ways(site: StoreSite, cfg: TeamConfig, errlog: TextIO) -> tuple[list[str], list[str]]:
    """The ways `cfg` asks for that this server has (the new way needs taskId "next"), and notes."""
    ways, notes = list(cfg.ways), [f"{site.kind}: {site.hosts}"]
    if "new" in ways:
        why = await new_way_available(site, errlog)
        if why:
            ways.remove("new")
            notes.append(f'{site.kind}: the new way is NOT MEASURED: this server refuses taskId "next" ({why})')
    return ways, notes


def run_order(ks: tuple[int, ...]) -> list[int]:
    """The K the targets are set at first, then the largest: a deadline cuts the cheapest runs."""
    return sorted(ks, key=lambda k: (k != TARGET_K, -k))


def saved(cfg: TeamConfig, record: dict[str, Any]) -> None:
    if cfg.save:
        with open(cfg.save, "a") as f:
            f.write(json.dumps(record) + "\n")


def load_saved(path: Path) -> tuple[list[TeamResult], list[str]]:
    """The results and notes a --save file holds (its last run's notes)."""
    results, notes = [], []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if "result" in record:
            fields = record["result"]
            results.append(TeamResult(**{**fields, "twice": Twice(**fields["twice"])}))
        elif "note" in record:
            notes.append(record["note"])
    return results, list(dict.fromkeys(notes))


async def run_all(cfg: TeamConfig, tmp: Path) -> tuple[list[TeamResult], list[str]]:
    plan = make_plan(cfg.tasks, cfg.seed)
    t_end = time.monotonic() + cfg.deadline
    results: list[TeamResult] = []
    notes: list[str] = [quiet_note(busy_share())]
    with open(tmp / "servers-stderr.log", "w") as errlog, ExitStack() as stack:
        sites: list[tuple[StoreSite, list[str]]] = []
        for kind in cfg.stores:
            site = file_site(tmp) if kind == "file" else stack.enter_context(pg_site())
            ways, said = await measured_ways(site, cfg, errlog)
            sites.append((site, ways))
            notes += said
        for k in run_order(cfg.ks):
            for site, ways in sites:
                for way in ways:
                    if time.monotonic() > t_end:
                        notes.append(f"{site.kind} {way} K={k}: not run (the benchmark's deadline had passed)")
                        continue
                    say(f"[team] {site.kind} {way} way, K={k}: {plan.n:,} tasks, work / K = {cfg.work_seconds:g} s")
                    r = await one_run(site, way, k, plan, cfg, errlog)
                    say(
                        f"[team]   makespan {r.makespan:.1f} s ({r.ratio:.2f}× bound), {r.violations} violations, "
                        f"{r.per_task(r.wasted):.3f} wasted/task, {r.kills} kills"
                    )
                    results.append(r)
                    saved(cfg, {"result": asdict(r)})
    for n in notes:
        saved(cfg, {"note": n})
    results.sort(key=lambda r: (cfg.stores.index(r.store), r.way, r.k))
    return results, notes


async def team_bench(cfg: TeamConfig, tmp: Path) -> list[str]:
    """Every run of `cfg`, bounded by its deadline (a run under way then is stopped); the
    BENCHMARKS.md section's lines."""
    tmp.mkdir(parents=True, exist_ok=True)
    results, notes = await asyncio.wait_for(run_all(cfg, tmp), cfg.deadline + cfg.run_timeout())
    return team_section(results, notes, cfg, make_plan(cfg.tasks, cfg.seed))


async def stoppable(cfg: TeamConfig, tmp: Path) -> list[str]:
    """team_bench, cancelled by SIGINT or SIGTERM (a background job ignores SIGINT), so that
    its cleanup runs: every server killed, the namespaces and the cluster removed."""
    main = asyncio.current_task()
    assert main is not None
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, main.cancel)
    return await team_bench(cfg, tmp)


def run_team_bench(cfg: TeamConfig) -> list[str]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-team-"))
    try:
        return asyncio.run(stoppable(cfg, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench.team", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="K = 2, 4 on an 80-task plan, file store: a smoke run")
    ap.add_argument("--k", type=int, nargs="+", help="the team sizes")
    ap.add_argument("--tasks", type=int, help="tasks in the plan")
    ap.add_argument("--work-seconds", type=float, help="total work / K in each run (durations are scaled to it)")
    ap.add_argument("--kill-every", type=float, help="seconds between kills (0: none)")
    ap.add_argument("--lease-floor", type=int, help="the shortest lease an agent takes (whole seconds, at least 1)")
    ap.add_argument(
        "--heartbeat", type=float, help="seconds between an agent's lease renewals while it works (0: none)"
    )
    ap.add_argument("--stores", nargs="+", choices=STORES)
    ap.add_argument("--ways", nargs="+", choices=WAYS)
    ap.add_argument("--deadline", type=float, help="seconds for the whole benchmark")
    ap.add_argument("--run-seconds", type=float, help="seconds one run may take before it is stopped")
    ap.add_argument("--save", type=Path, help="append each run's result (JSON lines) to this file")
    ap.add_argument("--render", type=Path, help="no run: write the section from a --save file (with these options)")
    ap.add_argument("--out", type=Path, default=REPO / "BENCHMARKS.md", help="the file whose section is replaced")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args(argv)
    if args.lease_floor is not None and args.lease_floor < 1:
        ap.error("--lease-floor must be at least 1 second")
    if args.heartbeat is not None and args.heartbeat < 0:
        ap.error("--heartbeat must be 0 (none) or more seconds")
    cfg = TEAM_QUICK if args.quick else TeamConfig()
    given = {
        "ks": tuple(args.k) if args.k else None,
        "tasks": args.tasks,
        "work_seconds": args.work_seconds,
        "kill_every": args.kill_every,
        "lease_floor": args.lease_floor,
        "heartbeat": args.heartbeat,
        "stores": tuple(args.stores) if args.stores else None,
        "ways": tuple(args.ways) if args.ways else None,
        "deadline": args.deadline,
        "run_seconds": args.run_seconds,
        "save": str(args.save) if args.save else None,
    }
    cfg = replace(cfg, **{k: v for k, v in given.items() if v is not None})
    if args.render:
        results, notes = load_saved(args.render)
        lines = "\n".join(team_section(results, notes, cfg, make_plan(cfg.tasks, cfg.seed)))
    else:
        lines = team_section_text(cfg)
    print(lines)
    if not args.no_write:
        text = args.out.read_text() if args.out.exists() else ""
        args.out.write_text(replace_section(text, lines))
        say(f"[team] wrote its section of {args.out}")
    return 0


def team_section_text(cfg: TeamConfig) -> str:
    return "\n".join(run_team_bench(cfg))


if __name__ == "__main__":
    sys.exit(main())
