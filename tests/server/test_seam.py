"""The server and the CLI see stores only through the seam (planning_core/store.py):
no module of `server/` names a backend, so a second backend is a drop-in, not a fork."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parents[2] / "server"
BACKENDS = ("FileStore", "MemoryStore", "PostgresStore")
# File utilities the Claude Code hook uses for its own state files (not plans).
FILE_UTILITIES = ("planning_core.stores.files.atomicfile", "planning_core.stores.files.regularfile")


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    tree = ast.parse(path.read_text())
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
    return found


@pytest.mark.parametrize("path", sorted(SERVER.rglob("*.py")), ids=lambda p: str(p.relative_to(SERVER)))
def test_server_modules_import_no_backend(path: Path) -> None:
    for module, names in _imports(path):
        assert not (module.startswith("planning_core.stores") and module not in FILE_UTILITIES), (
            f"{path.name} imports {module}: use planning_core.store (open_store, the protocols)"
        )
        assert not set(names) & set(BACKENDS), f"{path.name} imports {set(names) & set(BACKENDS)}"
    assert "getattr(state.store" not in path.read_text()
