"""The core tests' plan: the seed (tests.support.seed) in the `store` root. A module
that needs another plan defines its own `plan` fixture, which takes precedence."""

from __future__ import annotations

import pytest

from planning_core import Planner
from tests.support.seed import seed_plan


@pytest.fixture
def plan(planner: Planner) -> str:
    return seed_plan(planner)
