"""A throwaway PostgreSQL cluster for the benchmark's PostgreSQL column.

Started the way tests/support/pg.py starts the tests' cluster (the installed binaries,
a temp folder, 127.0.0.1 at a free port, as the `postgres` user when run as root), but
with PostgreSQL's own durability defaults (fsync, synchronous_commit, full_page_writes
on): the tests' cluster turns fsync off to be quick, which would hide what a durable
commit costs, and that cost is what the column is for.

    with throwaway_database() as url:     # postgresql://postgres@127.0.0.1:PORT/bench
        ...
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.pg import PG_BIN, RUN_AS, START_TIMEOUT, free_port, run_as_server

DBNAME = "bench"


@contextmanager
def throwaway_database() -> Iterator[str]:
    """A fresh cluster with one empty database; stopped and removed on exit."""
    top = Path(tempfile.mkdtemp(prefix="bench-pg-"))
    if os.geteuid() == 0:
        shutil.chown(top, user=RUN_AS)
    data = top / "data"
    ctl = [str(PG_BIN / "pg_ctl"), "-w", "-t", str(START_TIMEOUT), "-D", str(data)]
    run_as_server([str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8"])
    port = free_port()
    opts = f"-p {port} -k {top} -c listen_addresses=127.0.0.1"
    run_as_server([*ctl, "start", "-o", opts, "-l", str(top / "server.log")])
    try:
        run_as_server([str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", DBNAME])
        yield f"postgresql://postgres@127.0.0.1:{port}/{DBNAME}"
    finally:
        run_as_server([*ctl, "stop", "-m", "fast"])
        shutil.rmtree(top, ignore_errors=True)
