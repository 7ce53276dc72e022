"""`--store` values: which backend a URL names, and that a password never shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from planning_core.store import open_store, redact
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
