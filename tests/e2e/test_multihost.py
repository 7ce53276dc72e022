"""Several hosts, one PostgreSQL: three `planning-mcp serve` processes, each in a network
namespace of its own (tests.support.netns), share one database on the bridge; 8 writers
per host (tests.support.multihost_writer, run inside the host's namespace) create, link,
claim and complete tasks at once on ONE plan. Afterwards, read from the database itself:
every acknowledged write is there, every write said "not applied" (or refused) left no
trace, ids are unique, edges are mirrored, no cycle is stored, and no claim was won while
another owner's claim was in force. Then the same with one host's link cut mid-run (its
server keeps serving and reconnects by itself) and with PostgreSQL restarted mid-run.

Where namespaces are refused the hosts are plain processes on 127.0.0.1 and the cut is
emulated (netns docstring); the test says so on its output, and fails instead when
PLANNING_MCP_REQUIRE_NETNS=1."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest

from planning_core.stores import open_store
from tests.support import multihost_writer as mw
from tests.support.netns import BridgeCluster, Host, Network, bridge_cluster, network
from tests.support.pg import with_database
from tests.support.procs import HOST, REPO, Served, child_env, console_script, free_port, stop, wait_until
from tests.support.stores import assert_mirrored
from tests.support.waits import bound

HOSTS = 3
WRITERS = 8  # per host
PHASES = "5,5,5"  # 15 operations per writer: before, during and after the fault
CUT_SECONDS = 2.0  # how long a host's link stays down (the fault itself, not a wait)
STEP_TIMEOUT = bound(60)  # any one handshake
REQUIRE_ENV = "PLANNING_MCP_REQUIRE_NETNS"


@dataclass
class Server(Served):
    host: Host

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"


@dataclass
class World:
    net: Network
    pg: BridgeCluster
    db_url: str
    servers: list[Server]
    tmp: Path


def start_server(host: Host, db_url: str, tmp: Path) -> Server:
    port = free_port()
    stderr_path = tmp / f"serve-{host.name}.stderr"
    args = ["serve", "--transport", "http", "--host", HOST, "--port", str(port)]
    args += ["--store", host.database_url(db_url)]
    with stderr_path.open("wb") as err:
        proc = subprocess.Popen(
            host.wrap([console_script(), *args]), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            env=child_env(), cwd=tmp,
        )  # fmt: skip
    return Server(proc, port, stderr_path, host)


def wait_serving(server: Server) -> None:
    """The server's handshake: its startup line, printed once the port is bound."""

    def serving() -> bool:
        if server.proc.poll() is not None:
            raise AssertionError(f"{server.host.name}'s server exited {server.proc.returncode}: {server.stderr()}")
        return f"serving {server.url}" in server.stderr()

    wait_until(serving, f"{server.host.name}'s server", STEP_TIMEOUT)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("multihost")
    with network(HOSTS) as net, bridge_cluster(net) as pg:
        assert net.namespaced or os.environ.get(REQUIRE_ENV) != "1", f"namespaces refused here: {net.why_not}"
        print(f"\nmulti-host: {net.describe()}")
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE multihost")
        db_url = with_database(pg.url, "multihost")
        # All at once against the empty database: the schema is made under the servers' own lock.
        servers = [start_server(host, db_url, tmp) for host in net.hosts]
        try:
            for server in servers:
                wait_serving(server)
            yield World(net, pg, db_url, servers, tmp)
        finally:
            for server in servers:
                stop(server.proc)


# -- one round: every host's writers, three phases, a fault in the middle one ---------------


@dataclass
class WriterProc:
    host: Host
    proc: subprocess.Popen[str]
    log: Path
    err: Path
    lines: queue.Queue[str] = field(default_factory=queue.Queue)

    def stderr(self) -> str:
        return self.err.read_text(encoding="utf-8", errors="replace")[-2000:]

    def pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put("<exit>")

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def expect(self, prefix: str, timeout: float = STEP_TIMEOUT) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"{self.host.name}'s writers: no {prefix!r} within {timeout}s: {self.stderr()}"
            ) from None
        assert line.startswith(prefix), f"{self.host.name}'s writers said {line!r}, not {prefix!r}: {self.stderr()}"
        return line


def start_writers(world: World, server: Server, plan_name: str, seed: int) -> WriterProc:
    log = world.tmp / f"{plan_name}-{server.host.name}.jsonl"
    args = [sys.executable, "-m", "tests.support.multihost_writer", "--url", server.url]
    args += ["--host", str(server.host.index), "--plan-name", plan_name, "--writers", str(WRITERS)]
    args += ["--phases", PHASES, "--log", str(log), "--random-seed", str(seed)]
    args += ["--seed"] if server.host.index == 0 else []
    err_path = world.tmp / f"{plan_name}-{server.host.name}.stderr"
    with err_path.open("w") as err:
        proc = subprocess.Popen(
            server.host.wrap(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
            env=child_env(), cwd=REPO,
        )  # fmt: skip
    writer = WriterProc(server.host, proc, log, err_path)
    threading.Thread(target=writer.pump, daemon=True).start()
    return writer


@dataclass
class Round:
    plan: str
    records: list[dict[str, Any]]
    seconds: float
    pong: str = ""
    fault: tuple[float, float] = (0.0, 0.0)  # when the fault began and ended (time.monotonic)


def run_round(world: World, plan_name: str, fault: str | None, seed: int) -> Round:
    """The plan's writers on every host; `fault` ("cut": host 1's link, "restart": the
    database) happens while phase 2 runs."""
    writers = []
    try:
        # Host 0 seeds the plan before it says ready; the others touch it only after go.
        for server in world.servers:
            writers.append(start_writers(world, server, plan_name, seed))
            if server.host.index == 0:
                writers[0].expect("ready")
        for w in writers[1:]:
            w.expect("ready")
        started = time.monotonic()
        pong, window = "", (0.0, 0.0)
        for phase in (1, 2, 3):
            for w in writers:
                w.send("go")
            if phase == 2 and fault is not None:
                pong, window = strike(world, writers, fault)
            for w in writers:
                w.expect(f"done {phase}")
        for w in writers:
            code = w.proc.wait(timeout=STEP_TIMEOUT)
            assert code == 0, f"{w.host.name}'s writers exited {code}: {w.stderr()}"
        seconds = time.monotonic() - started
    finally:
        for w in writers:
            stop(w.proc)
    records = [mw_record for w in writers for mw_record in read_log(w.log)]
    return Round(mw.plan_of(plan_name), records, seconds, pong, window)


def strike(world: World, writers: list[WriterProc], fault: str) -> tuple[str, tuple[float, float]]:
    """The fault, once the phase is under way (a quarter of the calls logged), so that it
    meets calls in flight and transactions open: (host 1's pong during a cut, its window)."""
    per_host = WRITERS * int(PHASES.split(",")[1])

    def under_way(w: WriterProc) -> bool:
        done = w.log.read_text(encoding="utf-8").split("\n")[:-1]  # whole lines only: it is being written
        return sum(1 for line in done if '"phase": 2,' in line) >= per_host // 4

    if fault == "cut":
        victim = writers[1]
        wait_until(lambda: under_way(victim), "host1's writers under way", STEP_TIMEOUT)
        world.net.cut(victim.host, world.pg)
        began = time.monotonic()
        victim.send("ping")  # its server answers while its database is unreachable
        pong = victim.expect("pong", CUT_SECONDS * 2)
        time.sleep(max(0.0, CUT_SECONDS - (time.monotonic() - began)))  # the cut's length, not a wait
        world.net.restore(victim.host)
        return pong, (began, time.monotonic())
    assert fault == "restart", fault
    wait_until(lambda: all(under_way(w) for w in writers), "every host's writers under way", STEP_TIMEOUT)
    began = time.monotonic()
    world.pg.restart()
    return "", (began, time.monotonic())


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# -- what the database holds afterwards -------------------------------------------------------


@dataclass
class Figures:
    writes: int
    outcomes: Counter[str]
    claims_won: int
    seconds: float

    def line(self, title: str) -> str:
        acked = sum(self.outcomes[o] for o in mw.ACKED)
        maybe = sum(self.outcomes[o] for o in mw.MAYBE)
        refused = sum(self.outcomes[o] for _, o in mw.REFUSALS)
        return (
            f"{title}: {self.writes} writes in {self.seconds:.1f}s: {acked} acknowledged, {maybe} unknown, "
            f"{self.outcomes['not_applied']} not applied, {refused} refused; {self.claims_won} claims won; "
            + ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        )


def check_round(world: World, rnd: Round) -> Figures:
    records = rnd.records
    assert len(records) == HOSTS * WRITERS * sum(int(n) for n in PHASES.split(","))
    outcomes = Counter(r["outcome"] for r in records)

    store = open_store(world.db_url)
    try:
        tasks = assert_mirrored(store, rnd.plan)  # mirrored, nothing dangling, no cycle
    finally:
        store.close()
    ops = {(r["writer"], r["op"]): r for r in records}

    # Tasks: the hot ones, and one per create that was acknowledged or may have been.
    by_subject: dict[str, int] = {}
    for tid, t in tasks.items():
        assert t["subject"] not in by_subject, f"#{tid} and #{by_subject[t['subject']]} are one create"
        by_subject[t["subject"]] = tid
    creates = [r for r in records if r["kind"] == "create"]
    acked_ids = [r["task"] for r in creates if said(r) in mw.ACKED]
    assert len(acked_ids) == len(set(acked_ids)), "an id was given to two acknowledged creates"
    for r in creates:
        stored = by_subject.get(r["args"]["subject"])
        if said(r) in mw.ACKED:
            assert stored == r["task"], f"acknowledged create lost or renumbered: {r}"
        elif said(r) not in mw.MAYBE:
            assert stored is None, f"a create said {said(r)} but is stored as #{stored}: {r}"
    expected = {f"hot {i}" for i in range(1, mw.HOT + 1)} | {
        r["args"]["subject"] for r in creates if said(r) in (*mw.ACKED, *mw.MAYBE)
    }
    assert set(by_subject) <= expected, f"tasks no create made: {set(by_subject) - expected}"

    # Every write left its mark ({writer: op}) exactly when it should have.
    for tid, t in tasks.items():
        for writer, op in t.get("metadata", {}).items():
            sent = ops.get((writer, op))
            assert sent is not None, f"#{tid} carries {writer}:{op}, which no writer sent"
            assert said(sent) in (*mw.ACKED, *mw.MAYBE), f"#{tid} carries a write said {said(sent)}: {sent}"
            assert sent["task"] in (tid, None), f"#{tid} carries a write aimed at #{sent['task']}: {sent}"
    for r in records:
        if said(r) in mw.ACKED and r["kind"] != "create":
            mark = tasks[r["task"]].get("metadata", {}).get(r["writer"], 0)
            assert mark >= r["op"], f"acknowledged write missing from #{r['task']}: {r}"
        if r["kind"] == "link" and said(r) in mw.ACKED:
            assert r["args"]["addBlockedBy"][0] in tasks[r["task"]]["blockedBy"], f"acknowledged edge lost: {r}"

    # Only now, so that a failure above says first whether the calls' words were true.
    bad = [r for r in records if r["outcome"] in ("traceback", "other", "transport")]
    assert not bad, f"{len(bad)} calls answered neither a result nor a known tool error, e.g. {bad[:3]}"
    for server in world.servers:
        assert server.proc.poll() is None, f"{server.host.name}'s server died: {server.stderr()[-3000:]}"
        assert "Traceback" not in server.stderr(), f"{server.host.name}'s server: {server.stderr()[-3000:]}"
    return Figures(len(records), outcomes, check_claims(records), rnd.seconds)


def said(r: dict[str, Any]) -> str:
    """What the call said became of its write; a call that got no tool result (the test
    fails on it anyway) is judged by its error's words, else as unknown."""
    if r["outcome"] == "transport":
        return str(r.get("said") or "unknown")
    return str(r["outcome"])


def check_claims(records: list[dict[str, Any]]) -> int:
    """No claim won while another owner's claim was surely in force: after that claim was
    acknowledged and before its owner sent the completion that ended it. (Client clocks:
    time.monotonic is one clock for every process of the machine.) Returns claims won."""
    won = [r for r in records if r["kind"] == "claim" and r["outcome"] in mw.ACKED]
    ends: dict[tuple[str, int], list[float]] = {}
    for r in records:
        if r["kind"] == "complete" and r["outcome"] in (*mw.ACKED, *mw.MAYBE):
            ends.setdefault((r["writer"], r["task"]), []).append(r["t0"])
    violations = []
    for a in won:
        end = min((t for t in ends.get((a["writer"], a["task"]), []) if t > a["t1"]), default=float("inf"))
        for b in won:
            if b["task"] == a["task"] and b["writer"] != a["writer"] and b["t0"] > a["t1"] and b["t1"] < end:
                violations.append((a, b))
    assert not violations, f"{len(violations)} claims won under another owner's claim, e.g. {violations[:2]}"
    assert won, "no claim was won: the run tested nothing about claims"
    return len(won)


def database_errors(records: list[dict[str, Any]], **where: Any) -> list[dict[str, Any]]:
    return [r for r in records if r["outcome"] in mw.DATABASE_ERRORS and all(r[k] == v for k, v in where.items())]


def hit_by(rnd: Round, host: int | None = None) -> list[dict[str, Any]]:
    """The calls (of `host`, else of every host) in flight at some instant of the fault."""
    begin, end = rnd.fault
    return [r for r in rnd.records if r["t0"] < end and r["t1"] > begin and host in (None, host_of(r))]


def describe_hit(rnd: Round, host: int | None = None) -> str:
    hit = hit_by(rnd, host)
    slowest = max((r["t1"] - r["t0"] for r in hit), default=0.0)
    return (
        f"fault {rnd.fault[1] - rnd.fault[0]:.2f}s; {len(hit)} calls in flight during it "
        f"({dict(Counter(r['outcome'] for r in hit))}), slowest {slowest:.2f}s"
    )


def host_of(record: dict[str, Any]) -> int:
    return int(record["writer"][1 : record["writer"].index("w")])


# -- the tests --------------------------------------------------------------------------------


def test_three_hosts_share_one_plan(world: World) -> None:
    rnd = run_round(world, "calm", None, seed=1)
    figures = check_round(world, rnd)
    print(figures.line("no fault"))
    assert not database_errors(rnd.records), "database errors without a fault"


def test_a_hosts_link_is_cut_mid_run(world: World) -> None:
    rnd = run_round(world, "cut", "cut", seed=2)
    figures = check_round(world, rnd)
    print(figures.line(f"host1's link cut {CUT_SECONDS:g}s"))
    print(f"host1's server answered a ping during the cut: {rnd.pong}; host1: {describe_hit(rnd, 1)}")
    assert hit_by(rnd, 1), "the cut met no call of host1: it tested nothing"
    after = [r for r in rnd.records if r["phase"] == 3 and host_of(r) == 1]
    assert not database_errors(after), f"host1 did not reconnect by itself: {database_errors(after)[:3]}"
    assert any(r["outcome"] in mw.ACKED for r in after), "host1 acknowledged nothing after its link came back"
    others = [r for r in rnd.records if host_of(r) != 1]
    assert not database_errors(others), f"the other hosts saw database errors: {database_errors(others)[:3]}"


def test_postgresql_restarts_mid_run(world: World) -> None:
    rnd = run_round(world, "restart", "restart", seed=3)
    figures = check_round(world, rnd)
    print(figures.line("PostgreSQL restarted"))
    assert hit_by(rnd), "the restart met no call: it tested nothing"
    during = database_errors(rnd.records, phase=2)
    print(f"restart: {describe_hit(rnd)}; database errors in phase 2: {dict(Counter(r['outcome'] for r in during))}")
    after = database_errors(rnd.records, phase=3)
    assert not after, f"a server did not reconnect by itself: {after[:3]}"
