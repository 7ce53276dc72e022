"""Random branch histories merged with real git after `planning-mcp git-setup`: whatever two
branches did to one plan (created, linked, edited, deleted tasks, in one or two commits each),
`git merge` or `git rebase` leaves a plan that is whole and loses no task."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from planning_core import PlanningError
from tests.git.conftest import plan_is_whole
from tests.support.gitrepo import Repo

KEY = "key"  # metadata: a task's name in the test, never changed, so a renumbered task is found
# One operation: (kind, a task picked by position, another, a word).
OP = st.tuples(
    st.sampled_from(["create", "create", "link", "edit", "edit", "delete"]),
    st.integers(0, 9),
    st.integers(0, 9),
    st.sampled_from(["x", "y", "z"]),
)
BRANCH = st.lists(st.lists(OP, min_size=1, max_size=3), min_size=1, max_size=2)  # commits of ops


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """One repository for every example (each starts again from the commit tagged start)."""
    repo = Repo.create(tmp_path_factory.mktemp("histories") / "repo")
    repo.git("tag", "start")
    return repo


def apply(repo: Repo, plan: str, branch: str, commits: list[list[tuple[str, int, int, str]]]) -> None:
    for n, ops in enumerate(commits):
        p = repo.planner()
        for i, (kind, a, b, word) in enumerate(ops):
            ids = sorted(p.store.view(plan).tasks)
            pick = ids[a % len(ids)] if ids else None
            other = ids[b % len(ids)] if ids else None
            try:
                if kind == "create" or pick is None:
                    blockers = [pick] if pick is not None and b % 2 else []
                    p.create_task(plan, f"{branch}{n}{i}", blocked_by=blockers, metadata={KEY: f"{branch}{n}{i}"})
                elif kind == "link" and pick != other:
                    p.update_task(plan, pick, add_blocked_by=[other])
                elif kind == "edit":
                    p.update_task(plan, pick, description=f"{word} on {branch}", owner=word)
                elif kind == "delete":
                    p.update_task(plan, pick, status="deleted")
            except PlanningError:
                pass  # a refused operation (a cycle) changes nothing, as in real use
        repo.commit(f"{branch} {n}")


def keys_at(repo: Repo, commit: str, folder: str) -> dict[str, Any]:
    """The tasks of a commit by their test name (one git call: the examples are many)."""
    names = repo.git("ls-tree", "--name-only", f"{commit}:{folder}").stdout.split()
    wanted = "".join(f"{commit}:{folder}/{n}\n" for n in names if n.startswith("task_"))
    out = subprocess.run(
        ["git", "cat-file", "--batch"], cwd=repo.path, input=wanted.encode(), capture_output=True, check=True
    ).stdout
    docs = []
    while out:
        header, _, rest = out.partition(b"\n")
        size = int(header.split()[2])
        docs.append(json.loads(rest[:size]))
        out = rest[size + 1 :]
    return {d["metadata"][KEY]: d for d in docs}


def expected_keys(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]) -> set[str]:
    """Every task of either side, but one deleted on a side while the other left it alone."""
    kept = set(ours) | set(theirs)
    for key, doc in base.items():
        if (key not in ours and theirs.get(key) == doc) or (key not in theirs and ours.get(key) == doc):
            kept.discard(key)
    return kept


# No shrinking: each example is a few real git commands, and a shrink runs hundreds of them.
@settings(
    max_examples=50,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(base=st.lists(OP, min_size=1, max_size=3), ours=BRANCH, theirs=BRANCH, rebase=st.booleans())
# Both branches delete the only task: the merge leaves an empty plan.
@example(base=[("create", 0, 0, "x")], ours=[[("delete", 0, 0, "x")]], theirs=[[("delete", 0, 0, "y")]], rebase=False)
def test_random_histories_merge_whole(shared: Repo, base: Any, ours: Any, theirs: Any, rebase: bool) -> None:
    repo = shared
    repo.git("checkout", "-q", "-f", "main")
    repo.git("reset", "-q", "--hard", "start")
    repo.git("branch", "-q", "-D", "theirs", check=False)
    shutil.rmtree(repo.root, ignore_errors=True)
    if rebase:  # a rebase has no strategy to keep a task deleted on one side and edited on the other
        ours, theirs = (
            [[op for op in c if op[0] != "delete"] or [("create", 0, 0, "x")] for c in b] for b in (ours, theirs)
        )
    plan = repo.planner().create_plan("Work", analysis="", approach="", name="work", date="2026-12-01").name
    apply(repo, plan, "base", [base])
    repo.git("checkout", "-q", "-b", "theirs")
    apply(repo, plan, "theirs", theirs)
    repo.git("checkout", "-q", "main")
    apply(repo, plan, "ours", ours)
    folder = f".planning/todo/{plan}"
    fork = repo.git("merge-base", "main", "theirs").stdout.strip()
    want = expected_keys(*(keys_at(repo, c, folder) for c in (fork, "main", "theirs")))
    if rebase:
        repo.git("checkout", "-q", "theirs")
        repo.git("rebase", "-q", "main")
    elif repo.git("merge", "-q", "--no-edit", "theirs", check=False).returncode:
        # A task deleted on one side and edited on the other: what docs/git.md says to do.
        repo.git("merge", "--abort")
        repo.git("merge", "-q", "--no-edit", "-s", "planning-mcp", "theirs")
    tasks = plan_is_whole(repo)
    got = {t["metadata"][KEY] for t in tasks.values()}
    assert got == want
    assert len(got) == len(tasks)  # no task twice
