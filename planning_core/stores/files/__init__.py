"""The file store: the on-disk layout (todo/ and done/, a folder per plan, a JSON file per task), the embedded default."""

from .store import FileStore, Repair

__all__ = ["FileStore", "Repair"]
