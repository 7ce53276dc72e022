"""`--store` values: which backend a URL names, and that a password never shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from planning_core.stores import DatabaseUrl, database_url, open_store, redact
from planning_core.stores.files import FileStore
from planning_core.stores.memory import MemoryStore
from planning_core.stores.postgres import PostgresStore


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://planner:s3cret@db:5432/plans", "postgresql://planner:***@db:5432/plans"),
        ("postgresql://db/plans?sslmode=require&password=s3cret", "postgresql://db/plans?sslmode=require&password=***"),
        ("postgres://planner:s3cret@db/plans?PASSWORD=s3cret", "postgres://planner:***@db/plans?PASSWORD=***"),
        ("postgresql://planner@db/plans", "postgresql://planner@db/plans"),
        ("postgresql://planner:s3cret@h1:5432,h2:5433/plans", "postgresql://planner:***@h1:5432,h2:5433/plans"),
        (
            "postgresql://planner@db:70000/plans?sslpassword=s3cret",
            "postgresql://planner@db:70000/plans?sslpassword=***",
        ),
        (
            "postgresql://u:s3cret@[::1]:5432/plans?sslmode=verify-full",
            "postgresql://u:***@[::1]:5432/plans?sslmode=verify-full",
        ),
    ],
)
def test_redact_hides_every_password(url: str, shown: str) -> None:
    assert redact(url) == shown
    assert "s3cret" not in redact(url)


def test_open_store_picks_the_backend_from_the_url(tmp_path: Path) -> None:
    files = open_store(tmp_path / "plans")
    assert isinstance(files, FileStore) and files.root == tmp_path / "plans"
    by_url = open_store(f"file:{tmp_path / 'plans'}")
    assert isinstance(by_url, FileStore) and by_url.root == tmp_path / "plans"
    assert isinstance(open_store("memory:"), MemoryStore)
    db = open_store("postgresql://planner:s3cret@127.0.0.1:1/plans")  # nothing is connected yet
    assert isinstance(db, PostgresStore)
    assert "s3cret" not in db.describe() and "127.0.0.1" in db.describe()
    db.close()


@pytest.mark.parametrize(
    ("url", "where"),
    [
        ("postgresql://planner:s3cret@db:5432/plans", "plans on db:5432"),
        ("postgresql://planner@db/plans", "plans on db:5432"),
        ("postgresql://u:s3cret@127.0.0.1:58001,127.0.0.1:58002/plans", "plans on 127.0.0.1:58001,127.0.0.1:58002"),
        ("postgresql://u@h1,h2:5433/plans", "plans on h1:5432,h2:5433"),
        ("postgresql:///plans?host=h1,h2&port=6432", "plans on h1:6432,h2:6432"),
        ("postgresql://db/?dbname=plans&password=s3cret", "plans on db:5432"),
    ],
)
def test_where_names_every_host_with_its_own_port(url: str, where: str) -> None:
    assert DatabaseUrl.parse(url).where == where


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("postgresql://u@db:70000/plans", "has the port '70000', which is not a number from 1 to 65535"),
        ("postgresql://u@h1:5432,h2:99999/plans", "has the port '99999', which is not a number from 1 to 65535"),
        ("postgresql://u@db:port/plans", "has the port 'port', which is not a number from 1 to 65535"),
        ("postgresql:///plans", "names no host"),
        ("postgresql://u:s3cret@h1:5432,h2:5433/plans", None),
        ("postgresql:///plans?host=/var/run/postgresql", None),
    ],
)
def test_a_url_plainly_wrong_is_said_so(url: str, problem: str | None) -> None:
    assert DatabaseUrl.parse(url).problem() == problem


def test_several_hosts_connect_to_the_primary_only(caplog: pytest.LogCaptureFixture) -> None:
    multi = "postgresql://u:s3cret@h1:5432,h2:5433/plans"
    assert database_url(multi) == multi + "?target_session_attrs=read-write"
    assert "target_session_attrs=read-write" in caplog.text and "s3cret" not in caplog.text
    with_query = "postgresql://u@h1,h2/plans?sslmode=require"
    assert database_url(with_query) == with_query + "&target_session_attrs=read-write"
    chosen = "postgresql://u@h1,h2/plans?target_session_attrs=primary"
    assert database_url(chosen) == chosen  # the user's own choice stands
    single = "postgresql://u@h1/plans"
    assert database_url(single) == single
    store = open_store(multi)
    assert isinstance(store, PostgresStore) and store.url.endswith("?target_session_attrs=read-write")
    assert store.describe() == "postgresql://u:***@h1:5432,h2:5433/plans?target_session_attrs=read-write"
    store.close()
