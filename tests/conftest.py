"""Shared fixtures. The autouse guard keeps every test away from a real `.planning/`.

`store` is every backend in turn (ids: files, memory, postgres): a test that asks for it,
or for `planner` or a plan built on it, runs once per backend. A test about files (hand
edits, damaged files, the layout, locks, the index) asks for `file_store` as well or
instead: it then runs on the file store only, with `store` and `planner` over it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# No example database: a failure found once is not saved into the checkout (.hypothesis/)
# and replayed by every later run there; the failing example is printed, and a test that
# must keep it says so with @example.
settings.register_profile("suite", database=None)
settings.load_profile("suite")

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from planning_core import Planner  # noqa: E402
from planning_core.store import PlanStore  # noqa: E402
from planning_core.stores.files import FileStore  # noqa: E402
from tests.support.stores import STORE_KINDS, make_store  # noqa: E402


@pytest.fixture(autouse=True)
def _guard_planning_root(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PLANNING_MCP_ROOT points at a temp dir and the working directory is another temp dir,
    so neither the env default nor `./.planning` can reach a real folder; the user's
    configuration folder (trusted checks) is a temp dir too."""
    env_root = tmp_path_factory.mktemp("env-root")
    cwd = tmp_path_factory.mktemp("cwd")
    monkeypatch.setenv("PLANNING_MCP_ROOT", str(env_root))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    monkeypatch.chdir(cwd)
    return cwd


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store" in metafunc.fixturenames:
        kinds = ["files"] if "file_store" in metafunc.fixturenames else list(STORE_KINDS)
        metafunc.parametrize("store", kinds, indirect=True, ids=kinds)


@pytest.fixture
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PlanStore]:
    s = make_store(request.param, tmp_path)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def file_store(store: PlanStore) -> FileStore:
    """The file store at tmp_path/root, for a test about files (see the module docstring)."""
    assert isinstance(store, FileStore)
    return store


@pytest.fixture
def planner(store: PlanStore) -> Planner:
    return Planner(store)
