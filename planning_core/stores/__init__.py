"""The composition root of the stores: `open_store` picks the backend a URL names. The
backends below the seam (planning_core/store.py) are imported only here, and only when
chosen; URL parsing is stores/urls.py's, re-exported for the server and the CLI."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from ..store import PlanStore
from .urls import DATABASE_SCHEMES, MEMORY_URL, DatabaseUrl, database_url, is_conninfo, is_database_url, redact

__all__ = [
    "DATABASE_SCHEMES",
    "MEMORY_URL",
    "DatabaseUrl",
    "database_url",
    "is_conninfo",
    "is_database_url",
    "open_store",
    "redact",
]


def open_store(url: str | Path, *, lock_timeout: float | None = None) -> PlanStore:
    """The store a `--store` value names: a path or `file:` URL (the file store),
    `memory:` (in-memory, this process only), `postgresql://…` (the database). Nothing
    is created or connected until the store is used (`prepare` checks that it can be)."""
    text = str(url)
    if is_database_url(text):
        from .postgres import PostgresStore

        text = database_url(text)
        return PostgresStore(text) if lock_timeout is None else PostgresStore(text, lock_timeout=lock_timeout)
    if text == MEMORY_URL or text.startswith(MEMORY_URL + "//"):
        from .memory import MemoryStore

        return MemoryStore() if lock_timeout is None else MemoryStore(lock_timeout=lock_timeout)
    from .files import FileStore

    path = Path(urlsplit(text).path) if text.startswith("file:") else Path(text)
    return FileStore(path) if lock_timeout is None else FileStore(path, lock_timeout=lock_timeout)
