"""Shared fixtures. The autouse guard keeps every test away from a real `.planning/`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from planning_core import FileStore, Planner  # noqa: E402


@pytest.fixture(autouse=True)
def _guard_planning_root(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PLANNING_MCP_ROOT points at a temp dir and the working directory is another temp dir,
    so neither the env default nor `./.planning` can reach a real folder."""
    env_root = tmp_path_factory.mktemp("env-root")
    cwd = tmp_path_factory.mktemp("cwd")
    monkeypatch.setenv("PLANNING_MCP_ROOT", str(env_root))
    monkeypatch.chdir(cwd)
    return cwd


@pytest.fixture
def store(tmp_path: Path) -> FileStore:
    s = FileStore(tmp_path / "root")
    s.ensure_writable()
    return s


@pytest.fixture
def planner(store: FileStore) -> Planner:
    return Planner(store)
