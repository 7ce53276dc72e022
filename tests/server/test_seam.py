"""The server and the CLI see stores only through the seam (planning_core/store.py) and
the composition root that picks one (planning_core/stores/__init__.py, `open_store`): no
module of `server/` names a backend, so a second backend is a drop-in, not a fork. The
seam itself imports no backend."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parents[2] / "server"
SEAM = SERVER.parent / "planning_core" / "store.py"
COMPOSITION_ROOT = "planning_core.stores"  # open_store and the store URLs, never a backend
BACKENDS = ("FileStore", "MemoryStore", "PostgresStore")
FILEIO = SERVER.parent / "planning_core" / "fileio"  # a leaf: the standard library only
# `git-setup` installs git's merge driver for the committed file layout: files by nature.
GIT_SETUP = "git_setup.py"
FILE_LAYOUT_MODULES = (
    "planning_core.stores.files.merge.gitmerge",
    "planning_core.stores.files.historyread",
    "planning_core.stores.files.taskfiles",
)


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
        assert not module.startswith(COMPOSITION_ROOT + "."), (
            f"{path.name} imports {module}: use planning_core.store (the protocols) and {COMPOSITION_ROOT} (open_store)"
        )
        assert not set(names) & set(BACKENDS), f"{path.name} imports {set(names) & set(BACKENDS)}"
    assert "getattr(state.store" not in path.read_text()


def _absolute_imports(path: Path, package: str) -> list[str]:
    """Every module `path` (a module of `package`) imports, relative ones resolved, and
    `from X import name` also as X.name (a name may be a submodule)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            found += [module] + [f"{module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names]
    return found


def test_the_seam_imports_no_backend() -> None:
    """planning_core/store.py holds protocols and records only: choosing a backend is the
    composition root's, so the seam is read (and imported) without any backend."""
    for module in _absolute_imports(SEAM, "planning_core"):
        assert not (module == COMPOSITION_ROOT or module.startswith(COMPOSITION_ROOT + ".")), (
            f"store.py imports {module}: the seam holds protocols and records; open_store is {COMPOSITION_ROOT}'s"
        )


@pytest.mark.parametrize("path", sorted(FILEIO.glob("*.py")), ids=lambda p: p.name)
def test_the_file_helpers_are_a_leaf(path: Path) -> None:
    """planning_core/fileio imports nothing of the project (nor any third-party package):
    the file store and the server both use it, and it drags neither one into the other."""
    for module, _ in _imports(path):
        top = module.split(".")[0]
        assert top in sys.stdlib_module_names or top == "__future__", f"fileio/{path.name} imports {module}"
    assert not [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ImportFrom) and n.level], (
        f"fileio/{path.name} has a relative import"
    )


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


# Every module below the composition root (stores/__init__.py, whose open_store imports the
# backend a URL names).
BELOW_THE_ROOT = sorted(p for p in STORES.rglob("*.py") if p != STORES / "__init__.py")


@pytest.mark.parametrize("path", BELOW_THE_ROOT, ids=lambda p: str(p.relative_to(STORES)))
def test_no_backend_imports_another(path: Path) -> None:
    """A rule two backends share lives above them (planning_core/, stores/views.py,
    stores/staging.py), never in one backend for the other to import."""
    own = _backend_of(path)
    for module in _store_imports(path):
        if not (module.startswith(".") or module.startswith("planning_core.stores")):
            continue
        others = {p for p in module.lstrip(".").split(".") if p in BACKEND_PACKAGES} - {own}
        assert not others, f"{path.relative_to(STORES)} imports {module}: move the shared rule above the stores"
