"""A real PostgreSQL for the tests: one throwaway cluster per test session, a fresh empty
database per caller.

The cluster is started from the installed server binaries (PG_BIN, Debian's layout) in a
temporary folder the first time it is asked for, listening on 127.0.0.1 at a free port and
on a unix socket in that folder, and stopped when the interpreter that started it exits.
initdb refuses to run as root, so as root the cluster runs as the `postgres` user. A
detached watcher stops it should that interpreter be killed instead. When
PLANNING_MCP_TEST_DATABASE_URL is set, that server is used instead (it must let the URL's
user CREATE DATABASE; restart/stop/start are then refused: we do not own that server).

Missing binaries are a failure, not a skip: the PostgreSQL suite is part of what passes.

    url = fresh_database_url()       # postgresql://postgres@127.0.0.1:PORT/t_<unique>
    cluster().terminate_backends(dbname)   # pg_terminate_backend of every other connection
    cluster().restart()                     # pg_ctl restart (fast shutdown)
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
import uuid
from pathlib import Path
from typing import LiteralString
from urllib.parse import urlsplit, urlunsplit

import psycopg

from tests.support.procs import free_port
from tests.support.waits import bound

PG_BIN = Path(os.environ.get("PLANNING_MCP_PG_BIN", "/usr/lib/postgresql/15/bin"))
URL_ENV = "PLANNING_MCP_TEST_DATABASE_URL"
RUN_AS = "postgres"  # the unprivileged user the cluster runs as when the tests run as root
START_TIMEOUT = bound(60)  # seconds for pg_ctl -w (a loaded 2-core machine)

_lock = threading.Lock()
_cluster: Cluster | None = None
_counter = itertools.count(1)


class ClusterError(RuntimeError):
    """The test cluster cannot be started or driven; the message says why."""


def with_database(url: str, dbname: str) -> str:
    """`url` naming the database `dbname` instead of its own."""
    return urlunsplit(urlsplit(url)._replace(path="/" + dbname))


class Cluster:
    """A PostgreSQL server the tests may break on purpose. `url` names its `postgres`
    database as a superuser; use fresh_database_url() for a database of your own."""

    def __init__(self, url: str, datadir: Path | None = None, port: int | None = None) -> None:
        self.url = url
        self.datadir = datadir  # None: an external server (PLANNING_MCP_TEST_DATABASE_URL)
        self.port = port
        self._owner = os.getpid()

    # -- driving the server ---------------------------------------------------------

    def _pg_ctl(self, *args: str) -> None:
        if self.datadir is None:
            raise ClusterError(f"the tests do not own the server at {URL_ENV}; cannot {args[0]} it")
        log = self.datadir.parent / "server.log"
        options = (
            f"-p {self.port} -k {self.datadir.parent} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c full_page_writes=off -c max_connections=400"
        )
        cmd = [str(PG_BIN / "pg_ctl"), *args, "-w", "-t", str(START_TIMEOUT), "-D", str(self.datadir)]
        if args[0] in ("start", "restart"):
            cmd += ["-o", options, "-l", str(log)]
        run_as_server(cmd)

    def start(self) -> None:
        self._pg_ctl("start")

    def stop(self) -> None:
        self._pg_ctl("stop", "-m", "fast")

    def restart(self) -> None:
        """Stop (fast: open connections are cut, committed work is kept) and start again."""
        self._pg_ctl("restart", "-m", "fast")

    def terminate_backends(self, dbname: str) -> int:
        """pg_terminate_backend of every connection to `dbname` (but ours); how many."""
        return terminate_where(self.url, "datname = %s AND pid <> pg_backend_pid()", dbname)

    def create_database(self) -> str:
        name = f"t_{os.getpid()}_{next(_counter)}_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return with_database(self.url, name)

    def _shutdown(self) -> None:
        if self.datadir is None or os.getpid() != self._owner:
            return  # a forked child must not stop its parent's cluster
        with contextlib.suppress(ClusterError):  # already stopped by a test that then failed
            self._pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(self.datadir.parent, ignore_errors=True)


def as_server_user(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", RUN_AS, "--", *cmd] if os.geteuid() == 0 else cmd


def run_as_server(cmd: list[str]) -> None:
    """A server tool (initdb, pg_ctl, createdb) as the cluster's user; ClusterError when it fails."""
    done = subprocess.run(as_server_user(cmd), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ClusterError(f"{' '.join(cmd)} failed ({done.returncode}): {(done.stderr or done.stdout).strip()}")


def _start_own() -> Cluster:
    for tool in ("initdb", "pg_ctl"):
        if not (PG_BIN / tool).is_file():
            raise ClusterError(
                f"PostgreSQL server binaries are missing: no {PG_BIN / tool}. Install them "
                f"(Debian: apt-get install -y postgresql), set PLANNING_MCP_PG_BIN to their folder, "
                f"or set {URL_ENV} to a server the tests may create databases on."
            )
    top = Path(tempfile.mkdtemp(prefix="pgtest-"))
    if os.geteuid() == 0:
        shutil.chown(top, user=RUN_AS)
    datadir = top / "data"
    run_as_server(
        [str(PG_BIN / "initdb"), "-D", str(datadir), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"]
    )
    for _ in range(5):  # the free port may be taken between our probe and the server's bind
        port = free_port()
        found = Cluster(f"postgresql://postgres@127.0.0.1:{port}/postgres", datadir, port)
        try:
            found.start()
        except ClusterError:
            continue
        atexit.register(found._shutdown)
        _watch_owner(found)
        return found
    raise ClusterError(f"the test cluster in {top} did not start; see {top / 'server.log'}")


def _watch_owner(found: Cluster) -> None:
    """Stop and remove the cluster when the process that started it ends without running
    atexit (killed, a timeout, os._exit in a forked child): a detached shell polls the
    owner's pid once a second. After a clean exit it finds the folder gone and just ends."""
    assert found.datadir is not None
    stop = " ".join(
        shlex.quote(a)
        for a in as_server_user([str(PG_BIN / "pg_ctl"), "stop", "-m", "immediate", "-D", str(found.datadir)])
    )
    top = shlex.quote(str(found.datadir.parent))
    script = f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; [ -d {top} ] && {stop}; rm -rf {top}"
    subprocess.Popen(
        ["sh", "-c", script],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def cluster() -> Cluster:
    """The session's cluster, started on first use."""
    global _cluster
    with _lock:
        if _cluster is None:
            external = os.environ.get(URL_ENV)
            _cluster = Cluster(external) if external else _start_own()
        return _cluster


def fresh_database_url() -> str:
    """The URL of a new, empty database on the session's cluster (CREATE DATABASE each call)."""
    return cluster().create_database()


def terminate_where(url: str, condition: LiteralString, value: str) -> int:
    """pg_terminate_backend of each connection pg_stat_activity shows where `condition`
    (SQL, its one %s being `value`) holds, through the server at `url`; how many."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE " + condition, (value,)
        ).fetchall()
    return sum(1 for (ok,) in rows if ok)
