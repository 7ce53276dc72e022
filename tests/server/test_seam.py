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
# `git-setup` installs git's merge driver for the committed file layout: files by nature.
GIT_SETUP = "git_setup.py"
FILE_LAYOUT_MODULES = ("planning_core.stores.files.gitmerge", "planning_core.stores.files.taskfiles")


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
        if path.name == GIT_SETUP and module in FILE_LAYOUT_MODULES:
            continue
        assert not (module.startswith("planning_core.stores") and module not in FILE_UTILITIES), (
            f"{path.name} imports {module}: use planning_core.store (open_store, the protocols)"
        )
        assert not set(names) & set(BACKENDS), f"{path.name} imports {set(names) & set(BACKENDS)}"
    assert "getattr(state.store" not in path.read_text()


STORES = SERVER.parent / "planning_core" / "stores"
BACKEND_PACKAGES = ("files", "postgres", "memory")


def _backend_of(path: Path) -> str | None:
    rel = path.relative_to(STORES).parts
    name = rel[0].removesuffix(".py")
    return name if name in BACKEND_PACKAGES else None


def _store_imports(path: Path) -> list[str]:
    """Every module `path` imports, relative ones with their leading dots."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            found.append("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names]
    return found


@pytest.mark.parametrize("path", sorted(STORES.rglob("*.py")), ids=lambda p: str(p.relative_to(STORES)))
def test_no_backend_imports_another(path: Path) -> None:
    """A rule two backends share lives above them (planning_core/, stores/views.py,
    stores/staging.py), never in one backend for the other to import."""
    own = _backend_of(path)
    for module in _store_imports(path):
        if not (module.startswith(".") or module.startswith("planning_core.stores")):
            continue
        others = {p for p in module.lstrip(".").split(".") if p in BACKEND_PACKAGES} - {own}
        assert not others, f"{path.relative_to(STORES)} imports {module}: move the shared rule above the stores"
