"""PlanCreate: all or nothing, and how the folder name is derived."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from planning_core import InvalidInput, InvalidSlug, Planner
from planning_core.store import PlanStore
from tests.support.stores import stored_state


@pytest.mark.parametrize(
    ("tasks", "fragment"),
    [
        ([{"subject": "ok"}, {"subject": "   "}], "tasks[2]"),
        ([{"subject": "ok"}, {"subject": ""}], "tasks[2]"),
        ([{"subject": "ok"}, {"subject": "b", "blockedBy": [0]}], "tasks[2]"),
        ([{"subject": "ok"}, {"subject": "b", "blockedBy": [3]}], "tasks[2]"),
        ([{"subject": "ok"}, {"subject": "b", "blockedBy": [-1]}], "tasks[2]"),
        ([{"subject": "ok"}, {"subject": "b", "blockedBy": [2]}], "tasks[2]"),
        ([{"subject": "a", "blockedBy": [2]}, {"subject": "b", "blockedBy": [1]}], "cycle"),
        ([{"subject": "a", "blockedBy": [3]}, {"subject": "b", "blockedBy": [1]}, {"subject": "c", "blockedBy": [2]}],
         "cycle"),
        ([{"subject": "ok"}, {"subject": "x" * 201}], "tasks[2]"),
        ([{"subject": "ok"}, {"subject": "b", "description": "d" * 20_001}], "tasks[2]"),
        ([{"subject": "ok"}, {"subject": "b", "unknownField": 1}], "tasks[2]"),
        ([{"subject": "ok"}, "not an object"], "tasks[2]"),
        ([{"subject": f"t{i}"} for i in range(501)], "500"),
    ],
)  # fmt: skip
def test_invalid_task_leaves_nothing_behind(
    planner: Planner, store: PlanStore, tasks: list[Any], fragment: str
) -> None:
    planner.create_plan("Existing", date="2026-05-28")
    before = stored_state(store)  # files: every entry under the root, a .staging-* folder too
    with pytest.raises(InvalidInput) as info:
        planner.create_plan("New plan", date="2026-05-28", tasks=tasks)
    assert fragment in str(info.value)
    assert stored_state(store) == before
    assert store.active_plans() == ["2026-05-28-existing"]


def test_positional_cycle_is_named(planner: Planner) -> None:
    with pytest.raises(InvalidInput, match=r"#1 -> #2 -> #1|#2 -> #1 -> #2"):
        planner.create_plan("Loop", tasks=[{"subject": "a", "blockedBy": [2]}, {"subject": "b", "blockedBy": [1]}])


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Add Auth!!", "add-auth"),
        ("实现用户登录", "shi-xian-yong-hu-deng-lu"),
        ("  --Hello,   World 2.0--  ", "hello-world-2-0"),
        ("Ünïcödé Straße", "unicode-strasse"),
        ("!!!", "plan-e84c53"),  # nothing to transliterate: plan-<6 hex of the title's sha256>
    ],
)
def test_slug_from_title(planner: Planner, title: str, slug: str) -> None:
    assert planner.create_plan(title, date="2026-05-28").name == f"2026-05-28-{slug}"


def test_slug_is_at_most_60_chars(planner: Planner) -> None:
    name = planner.create_plan("word " * 40, date="2026-05-28").name
    slug = name[len("2026-05-28-") :]
    assert len(slug) <= 60 and not slug.endswith("-") and slug.startswith("word-word")
    name = planner.create_plan("x" * 100, date="2026-05-28").name
    assert name == "2026-05-28-" + "x" * 60
    # the -2 suffix also keeps it within 60
    name2 = planner.create_plan("x" * 100, date="2026-05-28").name
    assert name2 == "2026-05-28-" + "x" * 58 + "-2"


def test_existing_folder_gets_a_suffix(planner: Planner, store: PlanStore) -> None:
    names = [planner.create_plan("Add Auth", date="2026-05-28").name for _ in range(3)]
    assert names == ["2026-05-28-add-auth", "2026-05-28-add-auth-2", "2026-05-28-add-auth-3"]
    assert store.active_plans() == sorted(names)
    # an archived plan's name is taken too
    planner.archive(names[0])
    assert planner.create_plan("Add Auth", date="2026-05-28").name == "2026-05-28-add-auth-4"


def test_explicit_name_and_default_date(planner: Planner) -> None:
    name = planner.create_plan("Anything at all", name="my-plan-2").name
    assert name == f"{dt.date.today().isoformat()}-my-plan-2"
    assert planner.create_plan("t", name="a" * 60, date="2026-05-28").name == "2026-05-28-" + "a" * 60


@pytest.mark.parametrize("bad", ["Add Auth", "add_auth", "../x", "a" * 61, "-lead", "trail-", "ünï"])
def test_invalid_name_is_refused_not_cleaned(planner: Planner, store: PlanStore, bad: str) -> None:
    before = stored_state(store)
    with pytest.raises(InvalidSlug):
        planner.create_plan("Title", name=bad)
    assert stored_state(store) == before and store.active_plans() == []


def test_plan_create_returns_snapshot_with_tasks(planner: Planner) -> None:
    snap = planner.create_plan(
        "Two", analysis="A", approach="B", steps=["one", "two"], date="2026-05-28",
        tasks=[{"subject": " first ", "activeForm": "Doing first"}, {"subject": "second", "blockedBy": [1]}],
    )  # fmt: skip
    assert snap.title == "Two"
    assert [t.subject for t in snap.tasks.values()] == ["first", "second"]
    assert snap.tasks[1].blocks == [2] and snap.tasks[2].blocked_by == [1]
    assert snap.tasks[1].active_form == "Doing first"
