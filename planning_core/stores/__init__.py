"""The composition root of the stores: `open_store` picks the backend a URL names. The
backends below the seam (planning_core/store.py) are imported only here, and only when
chosen; URL parsing is stores/urls.py's, re-exported for the server and the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from ..activeplans import PlanLine
from ..store import PlanStore
from .urls import DATABASE_SCHEMES, MEMORY_URL, DatabaseUrl, database_url, is_conninfo, is_database_url, redact

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..history import Logged
    from .files.plainread import LightPlan

T = TypeVar("T")

__all__ = [
    "DATABASE_SCHEMES",
    "MEMORY_URL",
    "DatabaseUrl",
    "database_url",
    "is_conninfo",
    "is_database_url",
    "open_store",
    "plain_active_plans",
    "plain_events_since",
    "plain_plan",
    "plain_plan_line",
    "plain_plan_lines",
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
    if _is_memory(text):
        from .memory import MemoryStore

        return MemoryStore() if lock_timeout is None else MemoryStore(lock_timeout=lock_timeout)
    from .files import FileStore

    path = _file_root(text)
    return FileStore(path) if lock_timeout is None else FileStore(path, lock_timeout=lock_timeout)


def plain_plan_lines(url: str | Path) -> list[PlanLine] | None:
    """The Active Plans block's lines read without the models (stores/files/plainread.py),
    for a store that is a folder of files; None for any other store, or when only the store
    can tell (a document the models must judge): then open it and ask."""
    from .files.plainread import active_plan_lines

    return _plain(url, active_plan_lines)


def plain_active_plans(url: str | Path) -> list[str] | None:
    """The active plans' names (PlanStore.active_plans) read without the models, for a store
    that is a folder of files; None for any other store."""
    from .files.plainread import active_plan_names

    return _plain(url, active_plan_names)


def plain_plan_line(url: str | Path, name: str) -> PlanLine | None:
    """One active plan's line read without the models (plain_plan_lines); None for any other
    store, or when only the store can tell."""
    from .files.plainread import active_plan_line

    return _plain(url, lambda root: active_plan_line(root, name))


def plain_plan(url: str | Path, name: str) -> LightPlan | None:
    """One active plan as done.work_left reads it, read without the models (plain_plan_lines);
    None for any other store, or when only the store can tell."""
    from .files.plainread import light_plan

    return _plain(url, lambda root: light_plan(root, name))


def plain_events_since(url: str | Path, start: str, limit: int) -> list[Logged] | None:
    """PlanStore.events_since read without the models or the store opened, for a store that
    is a folder of files; None for any other store. Raises what the history read raises."""
    from .files.plainread import events_since

    return _plain(url, lambda root: events_since(root, start, limit))


def _plain(url: str | Path, read: Callable[[Path], T | None]) -> T | None:
    """`read` on the folder of a file store's URL; None for any other store."""
    text = str(url)
    return None if is_database_url(text) or _is_memory(text) else read(_file_root(text))


def _is_memory(text: str) -> bool:
    return text == MEMORY_URL or text.startswith(MEMORY_URL + "//")


def _file_root(text: str) -> Path:
    """The file store's root a path or `file:` URL names."""
    return Path(urlsplit(text).path) if text.startswith("file:") else Path(text)
