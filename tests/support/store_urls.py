"""A store URL per backend for the end-to-end tests, and server children started with it.

A server child is another process, so it can only be given a store it can open by itself
from a URL: `files` (a folder under the test's tmp_path) and `postgres` (a fresh empty
database on the tests' throwaway cluster, tests.support.pg). The in-memory store
(`memory:`) lives in one process only: a child given it would hold plans nobody else can
see, and a second child or a restart would start empty; so it does not apply here (the
in-process suites run it, see tests/support/stores.py).

    url = store_url("postgres", tmp_path)
    with serving_store(tmp_path, "http", url) as srv: ...     # serve --transport http --store URL
    async with connect(stdio_params(url, tmp_path), errlog) as client: ...
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from mcp import StdioServerParameters

from planning_core.store import PlanStore
from planning_core.stores import open_store
from tests.support.waits import bound

from .procs import HOST, Served, child_env, console_script, stop, wait_for_port, wait_until

SERVED_KINDS = ("files", "postgres")  # the backends a server child can be given (not memory)
_SERVING_LINE = re.compile(r"^planning-mcp\b.*: serving http://[^/]+:(\d+)/(?:mcp|sse)\b", re.MULTILINE)


def opened_store(url: str) -> Iterator[PlanStore]:
    """The store at `url`, prepared, and closed when done: a fixture's body (`yield from`), or
    `for store in opened_store(url)` for one block."""
    store = open_store(url)
    store.prepare()
    try:
        yield store
    finally:
        store.close()


def store_url(kind: str, tmp_path: Path) -> str:
    """A new, empty store of that kind for server children: a folder (not yet made; the
    server makes it) or a fresh PostgreSQL database. Its absence is a failure, not a skip."""
    if kind == "files":
        return str(tmp_path / "root")
    if kind == "postgres":
        from .pg import fresh_database_url

        return fresh_database_url()
    raise ValueError(f"a server child cannot be given a {kind!r} store; one of {', '.join(SERVED_KINDS)}")


def stdio_params(store: str, cwd: Path, *, script: bool = False) -> StdioServerParameters:
    """`python -m server --store URL` (or the console script) as a stdio child."""
    command, args = (console_script(), []) if script else (sys.executable, ["-m", "server"])
    return StdioServerParameters(command=command, args=[*args, "--store", store], env=child_env(), cwd=str(cwd))


@contextmanager
def serving_store(
    tmp_path: Path,
    transport: str,
    store: str,
    *,
    token: str | None = None,
    name: str = "serve",
    env: Mapping[str, str] | None = None,
) -> Iterator[Served]:
    """`planning-mcp serve --transport T --port 0 --store URL` as a child. The handshake is
    its startup line, which names the port it bound (so two children never race for a
    probed port), then that port answering: the line is printed once the socket is bound,
    before uvicorn listens on it, and a connection in between is refused."""
    stderr_path = tmp_path / f"{name}-{transport}.stderr"
    args = [console_script(), "serve", "--transport", transport, "--port", "0", "--store", store]
    if token is not None:
        args += ["--token", token]
    with stderr_path.open("wb") as err:
        proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=child_env(env), cwd=tmp_path
        )
    try:
        port: list[int] = []

        def started() -> bool:
            text = stderr_path.read_text(encoding="utf-8", errors="replace")
            found = _SERVING_LINE.search(text)
            if found:
                port.append(int(found.group(1)))
                return True
            if proc.poll() is not None:
                raise AssertionError(f"{name} exited with {proc.returncode} before serving: {text}")
            return False

        wait_until(started, f"{name}'s startup line", timeout=bound(30))
        wait_for_port(proc, port[0], stderr_path)
        yield Served(proc, port[0], stderr_path)
    finally:
        stop(proc)


__all__ = ["HOST", "SERVED_KINDS", "serving_store", "stdio_params", "store_url"]
