"""The core tests' plan: the seed (tests.support.seed) in the `store` root; a clock moved by
hand, and the actions on it. A module that needs another plan (or clock) defines its own
fixture, which takes precedence."""

from __future__ import annotations

import pytest

from planning_core import Planner
from planning_core.actions import Actions
from planning_core.store import PlanStore
from tests.support.clock import Clock
from tests.support.seed import seed_plan


@pytest.fixture
def clock() -> Clock:
    """The planner's clock, moved by hand (tests.support.clock), for a module's own planner."""
    return Clock()


@pytest.fixture
def actions(store: PlanStore, clock: Clock) -> Actions:
    """The actions on the `store` root, their planner on the clock moved by hand."""
    return Actions(Planner(store, clock))


@pytest.fixture
def plan(planner: Planner) -> str:
    return seed_plan(planner)
