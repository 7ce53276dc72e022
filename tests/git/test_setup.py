"""`planning-mcp git-setup`: what it writes, that it keeps what was there, and its refusals."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.gitrepo import Repo
from tests.support.procs import console_script


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), "git-setup", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=Repo(cwd).env(),  # this package's commands on PATH, as an install puts them
        timeout=60,
    )


def test_outside_a_repository_it_refuses_and_writes_nothing(tmp_path: Path) -> None:
    done = run(tmp_path, "--root", str(tmp_path / ".planning"))
    assert done.returncode == 2 and "run git-setup inside a git working tree" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_plans_outside_the_repository_are_refused(tmp_path: Path) -> None:
    repo = Repo.create(tmp_path / "repo", setup=False)
    done = run(repo.path, "--root", str(tmp_path / "elsewhere"))
    assert done.returncode == 2 and "not inside this repository" in done.stderr
    assert not (repo.path / ".gitattributes").exists()


def test_an_existing_hook_keeps_its_lines(tmp_path: Path) -> None:
    repo = Repo.create(tmp_path / "repo", setup=False)
    hook = repo.path / ".git" / "hooks" / "post-merge"
    hook.write_text("#!/bin/sh\necho mine\n")
    hook.chmod(0o755)
    (repo.path / ".gitattributes").write_text("*.png binary")  # no newline at the end
    assert run(repo.path, "--root", str(repo.root)).returncode == 0
    lines = hook.read_text().splitlines()
    assert lines[:2] == ["#!/bin/sh", "echo mine"] and lines[2].endswith("# planning-mcp git-setup")
    attributes = (repo.path / ".gitattributes").read_text().splitlines()
    assert attributes[0] == "*.png binary"
    assert ".planning/**/task_*.json merge=planning-mcp" in attributes
    again = run(repo.path, "--root", str(repo.root))
    assert "nothing changed" in again.stdout and hook.read_text().splitlines() == lines


def test_in_a_linked_worktree_with_the_main_trees_plans(tmp_path: Path) -> None:
    """A linked worktree's server uses the main working tree's plans by default: git-setup
    there names the same paths, and installs the hooks every worktree runs."""
    repo = Repo.create(tmp_path / "repo", setup=False)
    repo.git("worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    done = run(tmp_path / "side", "--root", str(repo.root))
    assert done.returncode == 0, done.stderr
    assert ".planning/**/task_*.json merge=planning-mcp" in (tmp_path / "side" / ".gitattributes").read_text()
    assert (repo.path / ".git" / "hooks" / "post-merge").is_file()


def test_the_plans_history_stays_out_of_git_in_a_root_made_before_it(tmp_path: Path) -> None:
    """A .planning/.gitignore written before the history existed does not name it: git-setup
    keeps it out of commits (and so out of merges), and a merge of two branches' plan work
    still leaves nothing to resolve."""
    repo = Repo.create(tmp_path / "repo", setup=False)
    plan = repo.new_plan(["a", "b"])
    gitignore = repo.root / ".gitignore"
    gitignore.write_text("\n".join(x for x in gitignore.read_text().splitlines() if "history" not in x) + "\n")
    assert "history.jsonl" in repo.git("status", "--porcelain", "--untracked-files=all").stdout  # the old root
    assert run(repo.path, "--root", str(repo.root)).returncode == 0
    assert "history" not in repo.git("status", "--porcelain", "--untracked-files=all").stdout
    repo.commit("plans")
    repo.update_on("feature", plan, 1, "feature", new=True, status="completed")
    repo.update_on("main", plan, 2, "main", subject="b on main")
    merged = repo.git("merge", "--no-edit", "feature")
    assert "CONFLICT" not in merged.stdout and repo.tracked_status() == ""
    assert "history" not in repo.git("ls-files").stdout
    events = repo.planner().store.plan_events(plan, 10)[0]  # type: ignore[attr-defined]
    assert [(e.event.op, e.event.task) for e in events] == [("updated", 2), ("updated", 1), ("plan-created", None)]
