"""Where a user meets the core first: plan names from non-English titles, the
plan argument's matching rule, and the refusals that must say what happened and what to
do next. Real plans in every backend; no mocks."""

from __future__ import annotations

import re
import shutil
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_core import Planner, TaskBlocked
from planning_core.actions import Actions
from planning_core.caller import NOBODY, Caller
from planning_core.errors import (
    AmbiguousPlan,
    BlockerUnreadable,
    CurrentPlanGone,
    InvalidPlanName,
    PlanExists,
    PlanNotFound,
)
from planning_core.names import MAX_SLUG, MAX_SUFFIX, claim_plan_name, slugify
from planning_core.session import Session
from planning_core.store import PlanStore
from planning_core.stores.files import FileStore
from tests.support.files import tree_state
from tests.support.stores import stored_state

SLUG = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?")


# -- plan names from titles -------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Überarbeitung der Straße", "uberarbeitung-der-strasse"),
        ("Ærø, Øresund, œuvre, Łódź", "aero-oresund-oeuvre-lodz"),
        ("ﬁx the café’s naïve façade", "fix-the-cafe-s-naive-facade"),
        ("U\u0308berarbeitung", "uberarbeitung"),  # decomposed Ü (NFD), as macOS file names come
        ("添加用户认证 🚀", "tian-jia-yong-hu-ren-zheng"),
        ("Привет, мир", "privet-mir"),
        ("Γειά σου κόσμε", "geia-soy-kosme"),
        ("Add Auth 2.0!!", "add-auth-2-0"),  # plain ASCII titles are named as before
    ],
)
def test_titles_keep_their_letters(planner: Planner, title: str, slug: str) -> None:
    assert planner.create_plan(title, date="2026-05-28").name == f"2026-05-28-{slug}"


def test_titles_with_nothing_to_transliterate_stay_distinguishable(planner: Planner) -> None:
    names = [planner.create_plan(t, date="2026-05-28").name for t in ("🚀🚀", "🎉 ✨", "!!!", "🚀🚀")]
    assert all(re.fullmatch(r"2026-05-28-plan-[0-9a-f]{6}(-2)?", n) for n in names), names
    assert len(set(names[:3])) == 3  # different titles, different names (not plan, plan-2, plan-3)
    assert names[3] == names[0] + "-2"  # the same title again: the usual -2
    assert slugify("🚀🚀") == slugify(" 🚀🚀 ")  # stable: the hash is of the trimmed title


def test_long_non_latin_title_is_cut_at_a_word_break(planner: Planner) -> None:
    slug = planner.create_plan("添加用户认证" * 10, date="2026-05-28").name[len("2026-05-28-") :]
    assert len(slug) <= MAX_SLUG and SLUG.fullmatch(slug)
    assert slug.startswith("tian-jia-yong-hu-ren-zheng-tian")
    assert slug.split("-")[-1] in {"tian", "jia", "yong", "hu", "ren", "zheng"}  # a whole syllable


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_any_title_gives_a_valid_bounded_slug(title: str) -> None:
    slug = slugify(title)
    assert len(slug) <= MAX_SLUG and SLUG.fullmatch(slug), (title, slug)
    assert slugify(title) == slug


# -- the plan argument: one matching rule ---------------------------------------------------


@pytest.fixture
def three(planner: Planner) -> list[str]:
    names = [
        planner.create_plan("Add auth", date="2026-05-28").name,
        planner.create_plan("Add audit log", date="2026-05-29").name,
        planner.create_plan("Fix login", date="2026-05-30").name,
    ]
    planner.archive(planner.create_plan("Old cleanup", date="2026-05-01").name, force=True)
    return names


def test_a_unique_part_names_the_plan(planner: Planner, three: list[str]) -> None:
    auth, audit, login = three
    assert planner.resolve(auth) == auth  # the full name first
    assert planner.resolve("add-auth") == auth  # the name ends with -<part>
    assert planner.resolve("login") == login
    assert planner.resolve("2026-05-29") == audit  # any unique part
    assert planner.resolve("cleanup") == "2026-05-01-old-cleanup"  # archived plans too (then read-only)


def test_an_ambiguous_part_lists_the_candidates(planner: Planner, store: PlanStore, three: list[str]) -> None:
    before = stored_state(store)
    with pytest.raises(AmbiguousPlan) as info:
        planner.resolve("add")
    assert str(info.value) == (
        "Plan 'add' matches several plans: 2026-05-28-add-auth, 2026-05-29-add-audit-log. "
        "Give the full name or a longer part of it."
    )
    assert stored_state(store) == before


def test_a_part_matching_nothing_lists_the_active_plans(planner: Planner, three: list[str]) -> None:
    with pytest.raises(PlanNotFound) as info:
        planner.resolve("deploy")
    assert str(info.value) == f"Plan 'deploy' not found. Active plans: {', '.join(three)}."
    # A full name is a name, never a part: a missing one is not matched by substring.
    with pytest.raises(PlanNotFound):
        planner.resolve("2026-05-28-add")


@pytest.mark.parametrize("bad", ["../add-auth", "add auth", "Add-Auth", "auth/..", "a" * 72, "add\x00auth", "é"])
def test_a_part_outside_the_name_alphabet_is_refused(planner: Planner, three: list[str], bad: str) -> None:
    with pytest.raises(InvalidPlanName, match="unique part"):
        planner.resolve(bad)


# -- messages ------------------------------------------------------------------------------


def test_plan_list_after_everything_was_archived(planner: Planner) -> None:
    actions, session = Actions(planner), Caller(NOBODY, Session())
    assert actions.plan_list(session).text == "No plans yet. Call PlanCreate to start one."
    for title in ("One", "Two"):
        actions.plan_archive(session, actions.plan_create(session, title).data.plan.name, force=True)
    assert actions.plan_list(session).text == (
        "No active plans: 2 plans are archived (call PlanList with includeDone=true to see them). "
        "Call PlanCreate to start a new one."
    )
    assert "(archived)" in actions.plan_list(session, include_done=True).text


def test_current_plan_removed_under_the_server(planner: Planner, file_store: FileStore) -> None:
    actions, session = Actions(planner), Caller(NOBODY, Session())
    gone = actions.plan_create(session, "Add auth", date="2026-05-28", tasks=[{"subject": "a"}]).data.plan.name
    other = planner.create_plan("Other work", date="2026-05-29", tasks=[{"subject": "b"}]).name
    shutil.rmtree(file_store.todo / gone)
    with pytest.raises(CurrentPlanGone) as info:
        actions.task_update(session, 1, status="completed")  # must not land on the other plan's #1
    assert str(info.value) == (
        f"The session's current plan {gone} is no longer an active plan: it was removed or renamed "
        f"outside this server. Nothing was changed. The only active plan is {other}; pass plan={other}, "
        "or call again without plan to use it."
    )
    assert file_store.get_task(other, 1).status.value == "pending"
    # Said once: the next call follows the usual rule (the only active plan).
    assert actions.task_list(session).data.plan.name == other


def test_current_plan_archived_by_someone_else(planner: Planner) -> None:
    actions, session = Actions(planner), Caller(NOBODY, Session())
    name = actions.plan_create(session, "Add auth", date="2026-05-28").data.plan.name
    planner.create_plan("A", date="2026-05-29")
    planner.create_plan("B", date="2026-05-30")
    planner.archive(name, force=True)  # another session, or the CLI
    with pytest.raises(CurrentPlanGone) as info:
        actions.task_list(session)
    message = str(info.value)
    assert "it was archived (read-only" in message and f"plan={name} still read it" in message
    assert message.endswith("Active plans: 2026-05-29-a, 2026-05-30-b; pass plan=<name> to choose one.")


def test_blocked_by_one_or_several(planner: Planner) -> None:
    tasks: list[dict[str, Any]] = [
        {"subject": "a"},
        {"subject": "b"},
        {"subject": "c", "blockedBy": [1]},
        {"subject": "d", "blockedBy": [1, 2]},
    ]
    name = planner.create_plan("P", tasks=tasks).name
    with pytest.raises(TaskBlocked, match=r"blocked by unfinished #1\. Finish it first"):
        planner.update_task(name, 3, status="in_progress")
    with pytest.raises(TaskBlocked, match=r"blocked by unfinished #1, #2\. Finish those first"):
        planner.update_task(name, 4, status="in_progress")


def test_starting_a_task_whose_blocker_cannot_be_read(planner: Planner, file_store: FileStore) -> None:
    name = planner.create_plan("P", tasks=[{"subject": "a"}, {"subject": "b"}, {"subject": "c", "blockedBy": [1]}]).name
    task_1 = file_store.todo / name / "task_1.json"
    task_1.write_bytes(b"{not json")
    before = tree_state(file_store.root)
    with pytest.raises(BlockerUnreadable) as info:
        planner.update_task(name, 3, status="in_progress")
    message = str(info.value)
    assert message.startswith("Task #3 cannot start: its blocker #1 cannot be read (task_1.json: invalid task JSON")
    assert message.endswith(
        f"Fix or remove that task by hand in plan {name}, or call TaskUpdate with removeBlockedBy [1]."
    )
    assert tree_state(file_store.root) == before
    # The way out the message offers works, and the unreadable file is never rewritten.
    change = planner.update_task(name, 3, status="in_progress", remove_blocked_by=[1])
    assert change.started and change.changed == ["status", "blockedBy"]
    assert task_1.read_bytes() == b"{not json"


def test_every_store_tries_the_same_plan_names_then_refuses() -> None:
    """One suffix rule for every store's create_plan: <date>-<slug>, -2, ... -999, each
    within the 60-character slug, then PlanExists naming the plan asked for."""
    tried: list[str] = []

    def every_name_taken(name: str) -> bool:
        tried.append(name)
        return False

    with pytest.raises(PlanExists, match="2026-01-02-x"):
        claim_plan_name("2026-01-02", "x", every_name_taken)
    assert tried[:3] == ["2026-01-02-x", "2026-01-02-x-2", "2026-01-02-x-3"]
    assert len(tried) == MAX_SUFFIX and tried[-1] == "2026-01-02-x-999"
    long = "a" * MAX_SLUG
    taken = {f"2026-01-02-{long}"}
    assert claim_plan_name("2026-01-02", long, lambda name: name not in taken) == f"2026-01-02-{'a' * 58}-2"
