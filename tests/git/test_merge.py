"""Committed plans merged with plain git commands, after `planning-mcp git-setup`: nothing lost,
ids unique, edges followed, and the renumbering told once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from planning_core.models import SETTABLE, WIRE
from planning_core.names import MAX_TASK_ID
from planning_core.stores.files import FileStore
from planning_core.stores.files.merge.taskmerge import INCOMING, MERGE_DROPPED, MERGE_KEPT, MERGED_FROM
from planning_core.stores.files.taskfiles import LOCK
from tests.git.conftest import by_subject, plan_is_whole
from tests.support.gitrepo import Repo


def diverge(repo: Repo) -> str:
    """main and feature both create task #3 (and feature #4 blocked by its #3) and both
    rename task #1, main later."""
    plan = repo.new_plan(["a", "b"])
    repo.git("checkout", "-q", "-b", "feature")
    p = repo.planner()
    p.create_task(plan, "feat3", blocked_by=[2])
    p.create_task(plan, "feat4", blocked_by=[3])
    p.update_task(plan, 1, subject="a on feature")
    repo.commit("feature work")
    repo.git("checkout", "-q", "main")
    p = repo.planner()
    p.create_task(plan, "main3", blocked_by=[1])
    p.update_task(plan, 1, subject="a on main")
    repo.commit("main work")
    return plan


def assert_diverged_merge(repo: Repo, branch: str) -> None:
    tasks = by_subject(plan_is_whole(repo))
    assert set(tasks) == {"a on main", "b", "main3", "feat3", "feat4"}
    assert tasks["main3"]["id"] == 3  # the branch merged into keeps its ids
    feat3 = tasks["feat3"]
    assert feat3["id"] == 5  # above the high-water mark of both sides (4)
    assert feat3["metadata"][MERGED_FROM] == {"id": 3, "branch": branch}
    assert tasks["feat4"]["blockedBy"] == [5]  # the edge followed the renumbered task
    assert feat3["blockedBy"] == [2] and tasks["main3"]["blockedBy"] == [1]
    kept = tasks["a on main"]["metadata"][MERGE_KEPT]["subject"]
    assert kept["value"] == "a on feature"  # the losing side's value is not dropped


def test_merge_of_branches_that_both_created_tasks(repo: Repo) -> None:
    diverge(repo)
    merged = repo.git("merge", "--no-edit", "feature")
    assert "CONFLICT" not in merged.stdout
    assert_diverged_merge(repo, "feature")
    assert len(repo.git("rev-list", "--parents", "-1", "HEAD").stdout.split()) == 3  # still the merge commit
    # The server tells it once, at start-up, then never again.
    first, second = (repo.cli("--root", str(repo.root)) for _ in range(2))  # stdin at EOF: start, then stop
    assert first.returncode == 0, first.stderr
    line = "plan 2026-12-01-work: merged tasks renumbered (both branches used these ids): #3 -> #5 (from feature)"
    assert line in first.stderr
    assert "renumbered" not in second.stderr
    assert repo.git("status", "--porcelain").stdout == ""  # the note file is not for committing


def test_without_git_setup_the_same_merge_conflicts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = Repo.create(tmp_path / "plain", setup=False)
    diverge(repo)
    merged = repo.git("merge", "--no-edit", "feature", check=False)
    assert merged.returncode != 0 and "CONFLICT" in merged.stdout


def test_rebase_renumbers_the_rebased_branch(repo: Repo) -> None:
    plan = diverge(repo)
    repo.git("checkout", "-q", "feature")
    p = repo.planner()  # a second commit that edits the colliding task again
    p.update_task(plan, 3, description="started", owner="bob")
    repo.commit("feature: start feat3")
    repo.git("rebase", "-q", "main")
    tasks = by_subject(plan_is_whole(repo))
    assert tasks["feat3"]["description"] == "started" and tasks["feat3"]["owner"] == "bob"
    assert tasks["main3"]["owner"] == ""
    assert_diverged_merge(repo, "feature")
    assert repo.git("rev-list", "--count", "main..HEAD").stdout.strip() == "2"


def test_cherry_pick(repo: Repo) -> None:
    diverge(repo)
    repo.git("cherry-pick", "feature")
    tasks = by_subject(plan_is_whole(repo))
    assert tasks["feat3"]["id"] == 5 and tasks["feat4"]["blockedBy"] == [5]
    assert tasks["feat3"]["metadata"][MERGED_FROM]["id"] == 3


def test_pull_merge_and_pull_rebase(repo: Repo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """On feature, `git pull` of main: a merge keeps feature's ids (main's #3 is renumbered);
    a rebase replays feature onto main (feature's #3 is renumbered)."""
    diverge(repo)
    for mode, moved, stays in (("--no-rebase", "main3", "feat3"), ("--rebase", "feat3", "main3")):
        clone = Repo(tmp_path / f"clone{mode}", clock=repo.clock)
        repo.git("clone", "-q", "-b", "feature", str(repo.path), str(clone.path))
        clone.cli("git-setup", "--root", str(clone.root))  # what the set-up writes to .git is not cloned
        assert clone.tracked_status() == ""
        clone.git("pull", "-q", mode, "--no-edit", "origin", "main")
        tasks = by_subject(plan_is_whole(clone))
        assert set(tasks) == {"a on main", "b", "main3", "feat3", "feat4"}
        assert tasks[stays]["id"] == 3 and tasks[moved]["id"] == 5
        assert tasks[moved]["metadata"][MERGED_FROM]["id"] == 3
        assert tasks["feat4"]["blockedBy"] == [tasks["feat3"]["id"]]


def test_git_setup_is_idempotent(repo: Repo) -> None:
    files = [repo.path / ".gitattributes", repo.path / ".git/config", repo.path / ".git/hooks/post-merge"]
    before = [f.read_bytes() for f in files]
    again = repo.cli("git-setup", "--root", str(repo.root))
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert [f.read_bytes() for f in files] == before


def test_octopus_merge_of_three_branches(repo: Repo) -> None:
    plan = repo.new_plan(["a", "b"])
    for branch in ("x", "y"):
        repo.git("checkout", "-q", "-b", branch, "main")
        p = repo.planner()
        p.create_task(plan, f"{branch}3", blocked_by=[1])
        p.create_task(plan, f"{branch}4", blocked_by=[3])
        repo.commit(branch)
    repo.git("checkout", "-q", "main")
    repo.planner().create_task(plan, "main3")
    repo.commit("main")
    repo.git("merge", "--no-edit", "-s", "planning-mcp", "x", "y")  # git-setup sets no strategy for all
    assert len(repo.git("rev-list", "--parents", "-1", "HEAD").stdout.split()) == 4
    tasks = by_subject(plan_is_whole(repo))
    assert set(tasks) == {"a", "b", "main3", "x3", "x4", "y3", "y4"}
    assert tasks["main3"]["id"] == 3
    for branch in ("x", "y"):
        third, fourth = tasks[f"{branch}3"], tasks[f"{branch}4"]
        assert third["metadata"][MERGED_FROM] == {"id": 3, "branch": branch}
        assert fourth["blockedBy"] == [third["id"]] and third["blockedBy"] == [1]


def test_deleted_on_one_side_and_edited_on_the_other_is_kept(repo: Repo) -> None:
    plan = repo.new_plan(["a", "b"])
    repo.update_on("gone", plan, 2, "delete b", new=True, status="deleted")
    repo.update_on("main", plan, 2, "edit b", subject="b edited")
    merged = repo.git("merge", "--no-edit", "-s", "planning-mcp", "gone")
    assert "deleted on one side and edited on the other; kept" in merged.stderr
    tasks = by_subject(plan_is_whole(repo))
    assert tasks["b edited"]["id"] == 2


def test_a_cycle_made_by_the_merge_is_broken_and_reported(repo: Repo) -> None:
    plan = repo.new_plan(["a", "b"])
    repo.update_on("x", plan, 1, "a after b", new=True, add_blocked_by=[2])
    repo.update_on("main", plan, 2, "b after a", add_blocked_by=[1])
    merged = repo.git("merge", "--no-edit", "x")
    assert "#2 no longer blocked by #1" in merged.stderr
    tasks = plan_is_whole(repo)
    assert tasks[1]["blockedBy"] == [2] and tasks[2]["blockedBy"] == []
    assert tasks[2]["metadata"][MERGE_DROPPED] == [1]


def test_a_task_file_hand_edited_into_invalid_json_is_kept(repo: Repo) -> None:
    plan = repo.new_plan(["a", "b"])
    repo.git("checkout", "-q", "-b", "hand")
    broken = b'{"id": 1, "subject": "a", oops\n'
    (repo.folder() / "task_1.json").write_bytes(broken)
    repo.commit("a hand edit")
    repo.git("checkout", "-q", "main")
    p = repo.planner()
    p.update_task(plan, 1, subject="a on main")
    p.create_task(plan, "c", blocked_by=[1])
    repo.commit("main work")
    merged = repo.git("merge", "--no-edit", "hand")
    assert "task_1.json: not a valid task file on one side; kept as it is" in merged.stderr
    folder = repo.folder()
    assert (folder / "task_1.json").read_bytes() == broken  # never overwritten
    saved = repo.path / ".git" / "planning-mcp-merge" / "kept" / ".planning" / "todo" / plan / "task_1.json.ours"
    assert json.loads(saved.read_text())["subject"] == "a on main"  # the other side's version is not lost
    c = json.loads((folder / "task_3.json").read_text())
    assert c["blockedBy"] == [1]  # a link to the unreadable task stays
    # The store reports it as it reports any unreadable task file.
    snap = FileStore(repo.root).snapshot(plan)
    assert [bad.task_id for bad in snap.corrupt] == [1]
    assert repo.tracked_status() == ""


def test_no_merged_task_is_given_an_id_past_the_last(repo: Repo) -> None:
    """Ids end at 999,999,999 (task_<N>.json has at most 9 digits): a task both branches
    made with the last id stays parked in its file, and the merge says so, instead of
    going to an id no task file can be named for (where no tool saw it)."""
    plan = repo.new_plan(["a"])
    (repo.folder() / ".highwatermark").write_text(f"{MAX_TASK_ID - 1}\n")
    repo.commit("ids near their end")
    repo.git("checkout", "-q", "-b", "late")
    assert repo.planner().create_task(plan, "late task").id == MAX_TASK_ID
    repo.commit("late")
    repo.git("checkout", "-q", "main")
    repo.planner().create_task(plan, "main task")
    repo.commit("main")
    merged = repo.git("merge", "--no-edit", "late")
    said = f"a merged task #{MAX_TASK_ID} from late was given no id: ids end at {MAX_TASK_ID:,}"
    assert said in merged.stderr + merged.stdout
    folder = repo.folder()
    assert sorted(p.name for p in folder.glob("task_*.json")) == ["task_1.json", f"task_{MAX_TASK_ID}.json"]
    doc = json.loads((folder / f"task_{MAX_TASK_ID}.json").read_text())
    assert doc["subject"] == "main task" and [t["subject"] for t in doc[INCOMING]] == ["late task"]


def test_a_field_changed_on_both_sides_goes_to_its_own_last_change(repo: Repo) -> None:
    """feature renames #1 first, main renames it later, then feature links it (a later
    updatedAt that says nothing about the subject): main's newer subject is kept, feature's is
    kept aside and the merge says so, at the merge and once from the server."""
    plan = repo.new_plan(["a", "b"])
    repo.update_on("feature", plan, 1, "feature: rename", new=True, subject="a on feature")
    repo.update_on("main", plan, 1, "main: rename", subject="a on main")
    repo.update_on("feature", plan, 1, "feature: link", add_blocked_by=[2])
    repo.git("checkout", "-q", "main")
    merged = repo.git("merge", "--no-edit", "feature")
    tasks = plan_is_whole(repo)
    assert tasks[1]["subject"] == "a on main" and tasks[1]["blockedBy"] == [2]
    assert tasks[1]["metadata"][MERGE_KEPT]["subject"]["value"] == "a on feature"
    note = 'task_1.json: subject changed on both branches; kept "a on main", "a on feature" kept aside'
    assert note in merged.stderr
    first, second = (repo.cli("--root", str(repo.root)) for _ in range(2))
    assert note in first.stderr and note not in second.stderr


def test_notes_written_on_both_branches_are_all_kept(repo: Repo) -> None:
    """Notes are appended, never replaced: a merge keeps every note of both sides, in the
    order they were written, and keeps none aside."""
    plan = repo.new_plan(["a", "b"])
    repo.planner().update_task(plan, 1, note="before the branches")
    repo.commit("a note")
    repo.update_on("feature", plan, 1, "feature: note", new=True, note="on feature")
    repo.update_on("main", plan, 1, "main: note", note="on main")
    repo.git("merge", "--no-edit", "feature")
    tasks = plan_is_whole(repo)
    texts = [n["text"] for n in tasks[1]["notes"]]
    assert texts[0] == "before the branches" and sorted(texts[1:]) == ["on feature", "on main"], texts
    assert MERGE_KEPT not in tasks[1]["metadata"]


# Two values for each field a caller sets, one a branch sets and one the other: every field
# but subject (above) merges by its own last change. The plan's tasks: a, b, c, d, e.
BOTH_SET = {
    "description": ("said on feature", "said on main"),
    "active_form": ("Doing it on feature", "Doing it on main"),
    "owner": ("feature-agent", "main-agent"),
    "metadata": ({"area": "feature"}, {"area": "main"}),
    "priority": (3, 1),
    "labels": (["feature"], ["main"]),
    "parent": (3, 4),
    "gate": ("human", {"after": "2030-01-01T00:00:00Z"}),
    "acceptance": (["passes on feature"], ["passes on main"]),
}


def test_every_field_a_caller_sets_is_in_the_merge_test() -> None:
    assert set(BOTH_SET) | {"subject"} == set(SETTABLE)


def _named(field: str, value: Any) -> tuple[str, Any]:
    """A field and its value as the merge names them: by its name in the file, metadata key by key."""
    if field == "metadata":
        ((key, inner),) = value.items()
        return f"metadata.{key}", inner
    return WIRE[field], value


def _value(task: dict[str, Any], name: str) -> Any:
    if name.startswith("metadata."):
        return task["metadata"].get(name.removeprefix("metadata."))
    return task.get(name)


def test_each_field_changed_on_both_sides_goes_to_its_own_last_change(repo: Repo) -> None:
    """Both branches set every field of #1 and #2; #1 last on main, #2 last on feature. Then
    each task's other branch makes an unrelated change (a link: the later updatedAt, which
    says nothing about the fields). Each field keeps the value set later, whichever branch it
    is on; the other is kept aside and said, at the merge and once by the server."""
    plan = repo.new_plan(["a", "b", "c", "d", "e"])
    feature, main = ({f: v[i] for f, v in BOTH_SET.items()} for i in (0, 1))
    repo.update_on("feature", plan, 1, "feature: #1", new=True, **feature)
    repo.git("checkout", "-q", "main")
    for task in (1, 2):
        repo.planner().update_task(plan, task, **main)
    repo.commit("main: #1 and #2")
    repo.git("checkout", "-q", "feature")
    repo.planner().update_task(plan, 1, add_blocked_by=[5])
    repo.planner().update_task(plan, 2, **feature)
    repo.commit("feature: link #1, #2")
    repo.update_on("main", plan, 2, "main: link #2", add_blocked_by=[5])
    merged = repo.git("merge", "--no-edit", "feature")
    tasks = plan_is_whole(repo)
    notes = []
    for task, later, earlier in ((1, main, feature), (2, feature, main)):
        assert tasks[task]["blockedBy"] == [5]
        for field in BOTH_SET:
            name, kept = _named(field, later[field])
            _, aside = _named(field, earlier[field])
            assert _value(tasks[task], name) == kept, (task, name)
            assert tasks[task]["metadata"][MERGE_KEPT][name]["value"] == aside, (task, name)
            shown = f"kept {json.dumps(kept)}, {json.dumps(aside)} kept aside"
            notes.append(f"task_{task}.json: {name} changed on both branches; {shown}")
    assert [n for n in notes if n not in merged.stderr] == []
    first, second = (repo.cli("--root", str(repo.root)) for _ in range(2))
    assert [n for n in notes if n not in first.stderr] == [] and "changed on both" not in second.stderr


def test_what_was_kept_aside_is_said_when_the_plan_is_fixed_at_the_next_commit(repo: Repo, tmp_path: Path) -> None:
    """The hook cannot take the plan's lock after the merge (here: the lock file is a link,
    which no writer follows): the plan is fixed at the next commit, and what the merge kept
    aside is said then, not lost with the first try."""
    plan = repo.new_plan(["a", "b"])
    repo.update_on("feature", plan, 1, "feature: description", new=True, description="said on feature")
    repo.update_on("main", plan, 1, "main: description", description="said on main")
    lock = repo.folder() / LOCK
    lock.unlink(missing_ok=True)
    lock.symlink_to(tmp_path / "elsewhere")
    merged = repo.git("merge", "--no-edit", "feature")
    assert "not fixed after the merge" in merged.stderr
    lock.unlink()
    again = repo.git("commit", "-q", "--allow-empty", "-m", "next")
    note = 'task_1.json: description changed on both branches; kept "said on main", "said on feature" kept aside'
    assert note in again.stderr
    assert plan_is_whole(repo)[1]["description"] == "said on main"
    first = repo.cli("--root", str(repo.root))
    assert note in first.stderr
