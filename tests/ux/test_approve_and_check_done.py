"""The person's commands around a plan's end, run as the installed `planning-mcp` on files
and on PostgreSQL: `approve PLAN ID` completes a task gated for a person, so the tasks
waiting for it can start; `status --check-done [PLAN]` exits 0 when the work is done, 1
with one line saying what is left, 2 when it cannot tell."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from planning_core import Planner
from planning_core.store import PlanStore
from tests.support.procs import run_cli
from tests.support.store_urls import SERVED_KINDS, opened_store, store_url


@pytest.fixture(params=SERVED_KINDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return store_url(request.param, tmp_path)


@pytest.fixture
def opened(url: str) -> Iterator[PlanStore]:
    yield from opened_store(url)


def _plan(store: PlanStore) -> str:
    tasks = [
        {"subject": "Draft the schema"},
        {"subject": "Approve the schema", "blockedBy": [1], "gate": "human"},
        {"subject": "Migrate", "blockedBy": [2]},
    ]
    return Planner(store).create_plan("Schema", analysis="a", approach="b", tasks=tasks).name


def test_a_person_approves_a_gated_task_from_the_cli_and_its_dependents_can_start(url: str, opened: PlanStore) -> None:
    name = _plan(opened)
    planner = Planner(opened)
    planner.update_task(name, 1, status="completed")
    done = run_cli(["approve", "--store", url, "schema", "2"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"Approved #2 Approve the schema in plan {name}: it is completed.",
        "Now unblocked: #3 Migrate",
    ]
    assert planner.update_task(name, "next", status="in_progress", owner="agent").task_id == 3
    again = run_cli(["approve", "--store", url, name, "2"])
    assert (again.returncode, again.stdout) == (2, "")
    assert "already completed" in again.stderr


def test_check_done_exits_1_with_what_is_left_then_0_once_done(url: str, opened: PlanStore) -> None:
    name = _plan(opened)
    planner = Planner(opened)
    ready = run_cli(["status", "--check-done", "--store", url, name])
    assert ready.returncode == 1
    assert ready.stdout == (
        f"Plan {name} is not done (3 of 3 tasks left): #1 Draft the schema is ready and nobody holds it. "
        'Next: TaskUpdate taskId "next" status "in_progress" with your owner name, then do it.\n'
    )
    planner.update_task(name, 1, status="completed")
    gated = run_cli(["status", "--check-done", "--store", url])  # every active plan
    assert gated.returncode == 1
    assert f"waiting for a person: #2 Approve the schema (planning-mcp approve {name} 2)" in gated.stdout
    planner.approve(name, 2)
    planner.update_task(name, 3, status="completed")
    done = run_cli(["status", "--check-done", "--store", url, name])
    assert (done.returncode, done.stdout) == (0, f"Plan {name} is done: all 3 tasks are completed.\n")
    missing = run_cli(["status", "--check-done", "--store", url, "no-such-plan"])
    assert (missing.returncode, missing.stdout) == (2, "")
    plain = run_cli(["status", "--store", url, name])  # a plan is for --check-done, never ignored
    assert plain.returncode == 2 and "--check-done" in plain.stderr
