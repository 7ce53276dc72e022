"""The file store, the embedded default: todo/ and done/, a folder per plan, a JSON file per task."""

from .store import FileStore, Repair

__all__ = ["FileStore", "Repair"]
