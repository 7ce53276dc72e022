"""Fixtures for the user-side tests: a project folder with a seeded `.planning` root
(the contract's example plan: 2 of 4 done, #3 in progress under alice)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planning_core import FileStore, Planner

FIXTURES = Path(__file__).parent / "fixtures"
PLAN_DATE = "2026-05-28"
PLAN_NAME = f"{PLAN_DATE}-add-auth"
SUBJECTS = ["Design auth schema", "Implement JWT middleware", "Add login endpoint", "Add logout endpoint"]


def seed(root: Path, in_progress: bool = True) -> str:
    store = FileStore(root)
    store.ensure_writable()
    planner = Planner(store)
    tasks = [
        {"subject": SUBJECTS[0], "description": "tables"},
        {"subject": SUBJECTS[1], "description": "jwt", "blockedBy": [1]},
        {"subject": SUBJECTS[2], "description": "POST /login", "blockedBy": [2]},
        {"subject": SUBJECTS[3], "description": "POST /logout", "blockedBy": [2]},
    ]
    name = planner.create_plan("Add auth", "no identity", "JWT", date=PLAN_DATE, tasks=tasks).name
    planner.update_task(name, 1, status="completed")
    planner.update_task(name, 2, status="completed")
    if in_progress:
        planner.update_task(name, 3, status="in_progress", owner="alice")
    return name


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
    return seed(root)


def fixture(name: str, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    data.update(overrides)
    return data
