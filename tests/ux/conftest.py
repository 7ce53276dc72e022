"""Fixtures for the user-side tests: a project folder with a seeded `.planning` root
(tests.support.seed, FORK edges: 2 of 4 done, #3 in progress under alice, #4 ready)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.seed import FORK, PLAN_NAME, seed_root

__all__ = ["PLAN_NAME", "fixture"]  # PLAN_NAME: still imported from here by test_install_and_errors.py

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder


@pytest.fixture
def root(project: Path) -> Path:
    return project / ".planning"


@pytest.fixture
def seeded(root: Path) -> str:
    return seed_root(root, FORK)


def fixture(name: str, **overrides: Any) -> dict[str, Any]:
    """A recorded Claude Code hook payload from fixtures/, with fields replaced."""
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    data.update(overrides)
    return data
