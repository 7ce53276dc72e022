"""A highly available PostgreSQL for the tests: etcd and two Patroni nodes on loopback.

Debian's `patroni`, `etcd-server` and `etcd-client` packages (installed by .ci/run), the
PostgreSQL 15 server binaries of tests.support.pg, every port from free_port. Patroni and
its PostgreSQL run as the `postgres` user when the tests run as root (initdb refuses
root). `synchronous_mode: true`: the leader's COMMIT waits for its synchronous standby.
Patroni's loop is 1 s and the leader key's TTL 10 s, so a killed leader is replaced in
about that time rather than Patroni's default 30 s.

Missing binaries are a failure when PLANNING_MCP_REQUIRE_PATRONI=1 (CI sets it), else a
skip: a developer's machine may lack the packages.

    with patroni_cluster(tmp_path) as ha:
        url = ha.create_database()        # postgresql://postgres@127.0.0.1:P1,127.0.0.1:P2/t_...
        ha.kill(ha.leader())              # SIGKILL the node's Patroni and every PostgreSQL process
        ha.start(node)                    # Patroni again: the node rejoins (as a standby)
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.support.pg import PG_BIN, RUN_AS, as_server_user
from tests.support.procs import HOST, free_port

PATRONI = shutil.which("patroni") or "/usr/bin/patroni"
ETCD = shutil.which("etcd") or "/usr/bin/etcd"
REQUIRE_ENV = "PLANNING_MCP_REQUIRE_PATRONI"
HEALTHY_TIMEOUT = 120.0  # seconds to a leader with a streaming synchronous standby (a loaded 2-core machine)
TTL, LOOP_WAIT, RETRY_TIMEOUT = 10, 1, 4  # Patroni's leader key TTL, its loop, its DCS retries (seconds)


def require_binaries() -> None:
    missing = [p for p in (PATRONI, ETCD, str(PG_BIN / "initdb")) if not Path(p).is_file()]
    if not missing:
        return
    text = (
        f"Patroni cluster binaries missing: {', '.join(missing)} "
        "(Debian: apt-get install -y patroni etcd-server etcd-client postgresql)"
    )
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(text)
    pytest.skip(text)


@dataclass
class Node:
    name: str
    pg_port: int
    api_port: int
    folder: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def config(self) -> Path:
        return self.folder / "patroni.yml"

    @property
    def datadir(self) -> Path:
        return self.folder / "data"

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@{HOST}:{self.pg_port}/postgres"

    def api(self, path: str, method: str = "GET", body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://{HOST}:{self.api_port}{path}", data=data, method=method)
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=5) as answer:
            text = answer.read().decode()
        return json.loads(text) if text.strip().startswith(("{", "[")) else text


class PatroniCluster:
    def __init__(self, top: Path) -> None:
        self.top = top
        self.etcd_port, self.etcd_peer = free_port(), free_port()
        self.etcd: subprocess.Popen[bytes] | None = None
        self.scope = f"pmcp-{uuid.uuid4().hex[:8]}"
        self.nodes = {name: Node(name, free_port(), free_port(), top / name) for name in ("node1", "node2")}

    # -- processes ----------------------------------------------------------------------

    def start_etcd(self) -> None:
        data = self.top / "etcd"
        peer, client = f"http://{HOST}:{self.etcd_peer}", f"http://{HOST}:{self.etcd_port}"
        args = [
            ETCD, "--name", "e1", "--data-dir", str(data),
            "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", f"e1={peer}", "--initial-cluster-state", "new",
        ]  # fmt: skip
        with (self.top / "etcd.log").open("wb") as log:
            self.etcd = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log)

    def write_config(self, node: Node) -> None:
        node.folder.mkdir(parents=True, exist_ok=True)
        hba = [f"host all all {HOST}/32 trust", f"host replication all {HOST}/32 trust", "local all all trust"]
        config = {
            "scope": self.scope,
            "name": node.name,
            "restapi": {"listen": f"{HOST}:{node.api_port}", "connect_address": f"{HOST}:{node.api_port}"},
            "etcd3": {"hosts": [f"{HOST}:{self.etcd_port}"]},
            "bootstrap": {
                "dcs": {
                    "ttl": TTL,
                    "loop_wait": LOOP_WAIT,
                    "retry_timeout": RETRY_TIMEOUT,
                    "synchronous_mode": True,
                    "postgresql": {
                        "use_pg_rewind": True,
                        "parameters": {"wal_log_hints": "on", "max_connections": 100, "wal_keep_size": "128MB"},
                    },
                },
                "initdb": [{"encoding": "UTF8"}, {"auth": "trust"}],
            },
            "postgresql": {
                "listen": f"{HOST}:{node.pg_port}",
                "connect_address": f"{HOST}:{node.pg_port}",
                "data_dir": str(node.datadir),
                "bin_dir": str(PG_BIN),
                "pgpass": str(node.folder / "pgpass"),
                "pg_hba": hba,
                "authentication": {
                    "superuser": {"username": "postgres"},
                    "replication": {"username": "postgres"},
                    "rewind": {"username": "postgres"},
                },
                "parameters": {"unix_socket_directories": str(node.folder), "fsync": "off"},
                "remove_data_directory_on_rewind_failure": True,
                "remove_data_directory_on_diverged_timelines": True,
            },
        }
        node.config.write_text(json.dumps(config, indent=2))  # JSON is YAML
        if os.geteuid() == 0:
            for path in (node.folder, node.config):
                shutil.chown(path, user=RUN_AS)

    def start(self, node: Node) -> None:
        """Patroni on `node` (it starts, bootstraps or rejoins its PostgreSQL)."""
        log = (node.folder / "patroni.log").open("ab")
        node.proc = subprocess.Popen(
            as_server_user([PATRONI, str(node.config)]),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=node.folder,  # its own: the test's working folder may be closed to the server user
            start_new_session=True,
        )
        log.close()

    def kill(self, node: Node) -> None:
        """SIGKILL the node's Patroni and its PostgreSQL (postmaster and every backend), as a
        machine that is lost."""
        for pid in self._processes_of(node):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if node.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.proc.pid, signal.SIGKILL)
            node.proc.wait(timeout=30)
            node.proc = None

    def pause(self, node: Node, sig: signal.Signals) -> None:
        """SIGSTOP (a node that stops answering, its connections kept) or SIGCONT."""
        for pid in self._processes_of(node):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def _processes_of(self, node: Node) -> list[int]:
        """Patroni (the session started for it) and the PostgreSQL processes of its data folder."""
        pids: list[int] = []
        postmaster = self._postmaster(node)
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            ppid, sid = int(fields[1]), int(fields[3])
            pid = int(entry.name)
            if (node.proc is not None and sid == node.proc.pid) or pid == postmaster or ppid == postmaster:
                pids.append(pid)
        return pids

    @staticmethod
    def _postmaster(node: Node) -> int | None:
        try:
            return int((node.datadir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def close(self) -> None:
        for node in self.nodes.values():
            self.kill(node)
        if self.etcd is not None:
            self.etcd.kill()
            self.etcd.wait(timeout=30)
        shutil.rmtree(self.top, ignore_errors=True)

    # -- state ----------------------------------------------------------------------------

    def members(self) -> list[dict[str, Any]]:
        for node in self.nodes.values():
            with contextlib.suppress(OSError, ValueError):
                found = node.api("/cluster")
                if isinstance(found, dict):
                    return list(found.get("members", []))
        return []

    def leader(self) -> Node:
        for member in self.members():
            if member.get("role") == "leader" and member.get("state") == "running":
                return self.nodes[member["name"]]
        raise AssertionError(f"no running leader: {self.members()}")

    def healthy(self) -> bool:
        """A running leader and a running synchronous standby (Patroni 3.0 says "running", not "streaming")."""
        roles = {(m.get("role"), m.get("state")) for m in self.members()}
        return ("leader", "running") in roles and ("sync_standby", "running") in roles

    def wait(self, ready: Callable[[], bool], what: str, timeout: float = HEALTHY_TIMEOUT) -> float:
        """Seconds until `ready()`; fails naming `what` and the cluster's state after `timeout`."""
        started = time.monotonic()
        while True:
            with contextlib.suppress(OSError, psycopg.Error, AssertionError):
                if ready():
                    return time.monotonic() - started
            if time.monotonic() - started > timeout:
                raise AssertionError(f"{what}: not within {timeout:g}s; members: {self.members()}")
            time.sleep(0.2)

    def url(self, dbname: str) -> str:
        """The multi-host URL a server of this cluster is given (no target_session_attrs:
        the store adds it)."""
        hosts = ",".join(f"{HOST}:{n.pg_port}" for n in self.nodes.values())
        return f"postgresql://postgres@{hosts}/{dbname}"

    def create_database(self) -> str:
        name = f"t_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(self.leader().dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def on(self, node: Node, dbname: str) -> psycopg.Connection[Any]:
        """A direct connection to `node`'s PostgreSQL."""
        return psycopg.connect(f"postgresql://postgres@{HOST}:{node.pg_port}/{dbname}", autocommit=True)


@contextmanager
def patroni_cluster() -> Iterator[PatroniCluster]:
    """A new cluster (etcd, node1, node2), healthy; everything killed and removed after."""
    require_binaries()
    top = Path(tempfile.mkdtemp(prefix="patroni-"))
    if os.geteuid() == 0:
        shutil.chown(top, user=RUN_AS)
    ha = PatroniCluster(top)
    try:
        ha.start_etcd()
        for node in ha.nodes.values():
            ha.write_config(node)
        first, second = ha.nodes.values()
        ha.start(first)
        ha.wait(lambda: ha.leader() is first, "node1 leading")
        ha.start(second)
        ha.wait(ha.healthy, "a leader with a synchronous standby")
        yield ha
    finally:
        ha.close()
