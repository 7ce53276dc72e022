"""Every refusal is an error with an actionable message and changes nothing stored, in every backend."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

import pytest

from planning_core import (
    ClaimConflict,
    DependencyCycle,
    InvalidInput,
    InvalidPlanName,
    InvalidSlug,
    InvalidTaskId,
    Planner,
    PlanningError,
    PlanNotFound,
    SelfDependency,
    TaskBlocked,
    TaskNotFound,
)
from planning_core.store import PlanStore
from tests.support.seed import PLAN_NAME, list_tasks
from tests.support.stores import stored_state


def _refused(store: PlanStore, call: Callable[[], Any], error: type[PlanningError]) -> str:
    """Run a call that must be refused with `error`. Every refusal is a PlanningError (the
    one type the tools turn into an isError answer), says something, and writes nothing."""
    before = stored_state(store)
    with pytest.raises(PlanningError) as info:
        call()
    assert isinstance(info.value, error), f"refused with {type(info.value).__name__}, not {error.__name__}"
    assert str(info.value).strip(), "a refusal without a message"
    assert stored_state(store) == before, "a refusal changed what is stored"
    return str(info.value)


def _cycle_in(message: str) -> list[int]:
    m = re.search(r"#\d+(?: -> #\d+)+", message)
    assert m, message
    return [int(x) for x in re.findall(r"\d+", m.group(0))]


def test_cycle_is_refused_and_named(planner: Planner, store: PlanStore, plan: str) -> None:
    msg = _refused(store, lambda: planner.update_task(plan, 2, add_blocked_by=[4]), DependencyCycle)
    assert "#2 -> #4 -> #2" in msg or "#4 -> #2 -> #4" in msg
    msg = _refused(store, lambda: planner.update_task(plan, 4, add_blocks=["#2"]), DependencyCycle)
    assert "#2 -> #4 -> #2" in msg or "#4 -> #2 -> #4" in msg


def test_longer_cycle_is_named_in_order(planner: Planner, store: PlanStore, plan: str) -> None:
    msg = _refused(store, lambda: planner.update_task(plan, 1, add_blocked_by=[4]), DependencyCycle)
    cycle = _cycle_in(msg)
    assert cycle[0] == cycle[-1] and set(cycle) in ({1, 2, 4}, {1, 3, 4}) and len(cycle) == 4
    # every consecutive pair is a real `blocks` edge, plus the one being added (4 blocks 1)
    snap = store.snapshot(plan)
    for a, b in itertools.pairwise(cycle):
        assert b in snap.tasks[a].blocks or (a, b) == (4, 1)


def test_create_task_closing_a_cycle_is_refused(planner: Planner, store: PlanStore, plan: str) -> None:
    msg = _refused(store, lambda: planner.create_task(plan, "loop", blocked_by=[4], blocks=[1]), DependencyCycle)
    cycle = _cycle_in(msg)
    assert cycle[0] == cycle[-1] == 5 and 1 in cycle and 4 in cycle


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"task_id": 9}, "#9"),
        ({"task_id": 2, "add_blocked_by": [7, "8"]}, "#7, #8"),
        ({"task_id": 2, "add_blocks": [1, 42]}, "#42"),
        ({"task_id": 2, "remove_blocked_by": ["#11"]}, "#11"),
        ({"task_id": 2, "remove_blocks": [12]}, "#12"),
        ({"task_id": 9, "status": "deleted"}, "#9"),
    ],
)
def test_unknown_ids_are_named(
    planner: Planner, store: PlanStore, plan: str, kwargs: dict[str, Any], named: str
) -> None:
    msg = _refused(store, lambda: planner.update_task(plan, **kwargs), TaskNotFound)
    assert named in msg


def test_unknown_ids_in_create_are_named(planner: Planner, store: PlanStore, plan: str) -> None:
    msg = _refused(store, lambda: planner.create_task(plan, "x", blocked_by=[1, 42], blocks=[43]), TaskNotFound)
    assert "#42" in msg and "#43" in msg
    _refused(store, lambda: planner.get_task(plan, 42), TaskNotFound)


def test_blocked_start_names_only_open_blockers(planner: Planner, store: PlanStore, plan: str) -> None:
    msg = _refused(store, lambda: planner.update_task(plan, 4, status="in_progress"), TaskBlocked)
    assert "#3" in msg and "#2" not in msg


def test_claim_conflict(planner: Planner, store: PlanStore, plan: str) -> None:
    msg = _refused(store, lambda: planner.update_task(plan, 3, status="in_progress", owner="bob"), ClaimConflict)
    assert "#3" in msg and "alice" in msg
    # the owner itself re-claiming is fine and changes nothing
    assert planner.update_task(plan, 3, status="in_progress", owner="alice").changed == []


@pytest.mark.parametrize("kwargs", [{"add_blocked_by": [2]}, {"add_blocks": ["#2"]}])
def test_self_dependency(planner: Planner, store: PlanStore, plan: str, kwargs: dict[str, Any]) -> None:
    msg = _refused(store, lambda: planner.update_task(plan, 2, **kwargs), SelfDependency)
    assert "#2" in msg


@pytest.mark.parametrize("bad", ["abc", 0, -1, True, False, "#0", "-3", "3.5", "", "#", 2.0, None, [3], "1e3"])
def test_invalid_task_ids(planner: Planner, store: PlanStore, plan: str, bad: object) -> None:
    _refused(store, lambda: planner.update_task(plan, bad, subject="x"), InvalidTaskId)
    _refused(store, lambda: planner.get_task(plan, bad), InvalidTaskId)


@pytest.mark.parametrize("bad", ["abc", 0, -1, True])
def test_invalid_ids_in_edge_lists(planner: Planner, store: PlanStore, plan: str, bad: object) -> None:
    _refused(store, lambda: planner.update_task(plan, 4, add_blocked_by=[1, bad]), InvalidTaskId)
    _refused(store, lambda: planner.create_task(plan, "x", blocked_by=[bad]), InvalidTaskId)


BAD_PLAN_NAMES = [
    "../x", "/etc", "2026-01-01-Bad", "x\x00y", "2026-13-01-a", "2026-02-30-a", "2026-01-01-café",
    "２０２６-01-01-a", "2026-01-01-", "2026-01-01-a/../../x", "2026-01-01-" + "a" * 61, "..", ".", "",
    "2026-01-01-a\n", " 2026-01-01-a", "todo", "2026-01-01--a", "2026-01-01-a-",
]  # fmt: skip


@pytest.mark.parametrize("bad", BAD_PLAN_NAMES)
def test_invalid_plan_names(planner: Planner, store: PlanStore, plan: str, bad: str) -> None:
    _refused(store, lambda: planner.create_task(bad, "x"), InvalidPlanName)
    _refused(store, lambda: planner.update_task(bad, 1, subject="x"), InvalidPlanName)
    _refused(store, lambda: store.snapshot(bad), InvalidPlanName)
    _refused(store, lambda: store.read_plan_md(bad), InvalidPlanName)
    _refused(store, lambda: planner.archive(bad, force=True), InvalidPlanName)
    if bad:  # an empty plan means "the current plan"
        # The plan argument also takes a part of a name (a-z, 0-9, '-'): such a part that
        # matches nothing is "not found"; anything else is refused as an invalid name.
        part = re.fullmatch(r"[a-z0-9-]{1,71}", bad) is not None
        _refused(store, lambda: planner.resolve(bad), PlanNotFound if part else InvalidPlanName)


@pytest.mark.parametrize("bad", ["Bad", "a b", "../x", "x/y", "a" * 61, "-a", "add_auth", "é", "x\x00"])
def test_invalid_slug_in_plan_create_is_refused_not_cleaned(planner: Planner, store: PlanStore, bad: str) -> None:
    _refused(store, lambda: planner.create_plan("Title", name=bad), InvalidSlug)


@pytest.mark.parametrize("bad", ["2026-13-01", "2026-1-1", "20260101", "tomorrow", "2026-02-30"])
def test_invalid_date_in_plan_create(planner: Planner, store: PlanStore, bad: str) -> None:
    _refused(store, lambda: planner.create_plan("Title", date=bad), InvalidInput)


def test_over_long_inputs(planner: Planner, store: PlanStore, plan: str) -> None:
    long_subject, long_desc = "s" * 201, "d" * 20_001
    big_meta = {"k": "v" * (16 * 1024)}
    _refused(store, lambda: planner.create_task(plan, long_subject), InvalidInput)
    _refused(store, lambda: planner.create_task(plan, "ok", long_desc), InvalidInput)
    _refused(store, lambda: planner.create_task(plan, "ok", metadata=big_meta), InvalidInput)
    _refused(store, lambda: planner.update_task(plan, 4, subject=long_subject), InvalidInput)
    _refused(store, lambda: planner.update_task(plan, 4, description=long_desc), InvalidInput)
    _refused(store, lambda: planner.update_task(plan, 4, metadata=big_meta), InvalidInput)
    _refused(store, lambda: planner.create_plan("t" * 201), InvalidInput)
    # at the limits it is accepted
    t = planner.create_task(plan, "s" * 200, "d" * 20_000, metadata={"k": "v" * 16_000})
    assert len(t.subject) == 200


def test_metadata_merge_over_the_limit_is_refused(planner: Planner, store: PlanStore, plan: str) -> None:
    planner.update_task(plan, 4, metadata={"a": "x" * 10_000})
    _refused(store, lambda: planner.update_task(plan, 4, metadata={"b": "y" * 10_000}), InvalidInput)


@pytest.mark.parametrize(
    "call",
    [
        lambda p: p.create_task(PLAN_NAME, "   "),
        lambda p: p.create_task(PLAN_NAME, 42),
        lambda p: p.create_task(PLAN_NAME, "x", metadata=["not", "a", "dict"]),
        lambda p: p.update_task(PLAN_NAME, 4, subject=""),
        lambda p: p.update_task(PLAN_NAME, 4, status="done"),
        lambda p: p.update_task(PLAN_NAME, 4, owner="o" * 201),
        lambda p: p.create_task(PLAN_NAME, "x\x00y"),
        lambda p: list_tasks(p, PLAN_NAME, status="deleted"),
    ],
)
def test_other_bad_inputs(planner: Planner, store: PlanStore, plan: str, call: Callable[[Planner], Any]) -> None:
    _refused(store, lambda: call(planner), InvalidInput)
