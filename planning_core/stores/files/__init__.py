"""The file store, the embedded default: todo/ and done/, a folder per plan, a JSON file per task."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .store import FileStore, Repair

__all__ = ["FileStore", "Repair"]


def __getattr__(name: str) -> Any:
    # The store (and the models it loads) only when asked for: plainread.py, which the
    # Claude Code hook reads plans with before each prompt, goes without them.
    if name in __all__:
        from . import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
