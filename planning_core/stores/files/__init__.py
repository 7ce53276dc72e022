"""The file store: the contract's on-disk layout (§2), the embedded default."""

from .store import FileStore, Repair

__all__ = ["FileStore", "Repair"]
