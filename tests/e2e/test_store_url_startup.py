"""`--store` URLs at start-up, through the real console script: libpq's multi-host form (the
URL a highly available cluster needs) serves and writes, says on stderr that it connects to
the primary only, and never prints a secret; a URL plainly wrong is one line and exit 2,
never a traceback. The database is the tests' real cluster (tests.support.pg), named twice
so that the URL has two hosts."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from mcp import Client

from tests.support.mcp import text_of
from tests.support.pg import fresh_database_url
from tests.support.procs import run_cli
from tests.support.store_urls import serving_store

SECRET = "s3cret-pw"  # the cluster trusts loopback, so any password connects; it must never show


def multi_host_url() -> str:
    parts = urlsplit(fresh_database_url())
    host = f"{parts.hostname}:{parts.port}"
    return f"postgresql://{parts.username}:{SECRET}@{host},{host}{parts.path}?sslpassword={SECRET}"


async def test_a_multi_host_url_serves_and_writes_without_showing_a_secret(tmp_path: Path) -> None:
    url = multi_host_url()
    with serving_store(tmp_path, "http", url) as srv:
        async with Client(f"{srv.base}/mcp", mode="2026-07-28") as client:
            made = await client.call_tool("PlanCreate", {"title": "Two hosts", "analysis": "a", "approach": "b"})
            assert not made.is_error, text_of(made)
        err = srv.stderr_path.read_text(encoding="utf-8")
    assert "target_session_attrs=read-write" in err, err
    assert SECRET not in err and "Traceback" not in err, err
    status = run_cli(["status", "--store", url])
    assert status.returncode == 0, status.stderr
    assert "two-hosts" in status.stdout and SECRET not in status.stdout + status.stderr


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (f"postgresql://u:{SECRET}@127.0.0.1:70000/plans", "has the port '70000'"),
        (f"postgresql://u:{SECRET}@127.0.0.1:5432,127.0.0.1:99999/plans", "has the port '99999'"),
    ],
)
def test_a_port_out_of_range_is_one_line_and_exit_2(url: str, said: str) -> None:
    done = run_cli(["serve", "--transport", "http", "--port", "0", "--store", url])
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr and SECRET not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
