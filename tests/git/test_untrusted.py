"""A repository someone else controls: what it commits cannot make planning-mcp's git
integration run its code, and the set-up never makes plain git worse."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from planning_core.stores.files.merge.gitmerge import HOOKS
from tests.git.conftest import by_subject, plan_is_whole
from tests.git.test_merge import diverge
from tests.support.gitrepo import Repo
from tests.support.procs import REPO
from tests.support.waits import bound
from tests.support.wheel import build_wheel

HOSTILE = "import pathlib\npathlib.Path({marker!r}).write_text('imported from the work tree')\n"


@dataclass
class Install:
    """An installed planning-mcp: the folder of its console scripts."""

    kind: str
    bin: Path

    def env(self, repo: Repo) -> dict[str, str]:
        env = repo.env()
        env["PATH"] = os.pathsep.join([str(self.bin), env["PATH"]])
        # An empty entry is the current folder: what `export PYTHONPATH=$PYTHONPATH:/x` makes.
        env["PYTHONPATH"] = "" if self.kind == "wheel" else f"{REPO}{os.pathsep}"
        return env

    def git_setup(self, repo: Repo) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin / "planning-mcp"), "git-setup", "--root", str(repo.root)]
        done = subprocess.run(command, cwd=repo.path, env=self.env(repo), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done


@pytest.fixture(scope="module")
def wheel_install(tmp_path_factory: pytest.TempPathFactory) -> Install:
    """planning-mcp installed from its wheel into a venv of its own; its dependencies come
    from this venv's site-packages (offline), whose editable finder is not loaded there."""
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(tmp, bound(120))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=bound(60))
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], capture_output=True, text=True
    ).stdout.strip()
    Path(site, "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)]
    subprocess.run(install, check=True, capture_output=True, timeout=bound(120))
    return Install("wheel", venv / "bin")


@pytest.fixture(params=["editable", "wheel"])
def install(request: pytest.FixtureRequest) -> Iterator[Install]:
    if request.param == "wheel":
        yield request.getfixturevalue("wheel_install")
    else:
        yield Install("editable", Path(sys.executable).parent)


class HostileRepo(Repo):
    """A repository whose top folder holds a `planning_core/` package of its own, set up with
    one install; git runs with that install's commands."""

    install: Install

    def env(self) -> dict[str, str]:
        return self.install.env(Repo(self.path)) if hasattr(self, "install") else super().env()


def hostile_repo(path: Path, install: Install, marker: Path) -> HostileRepo:
    repo = HostileRepo.create(path, setup=False)
    repo.install = install
    install.git_setup(repo)
    package = repo.path / "planning_core"
    for folder in (package, package / "stores", package / "stores" / "files"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text(HOSTILE.format(marker=str(marker)))
    (package / "stores" / "files" / "__main__.py").write_text(HOSTILE.format(marker=str(marker)))
    repo.commit("a package of the repository's own")
    return repo


@pytest.mark.parametrize("operation", ["merge", "rebase", "cherry-pick", "pull"])
def test_code_committed_in_the_work_tree_never_runs(tmp_path: Path, install: Install, operation: str) -> None:
    marker = tmp_path / "marker"
    repo = hostile_repo(tmp_path / "repo", install, marker)
    diverge(repo)
    if operation == "merge":
        done = repo.git("merge", "--no-edit", "feature")
    elif operation == "rebase":
        repo.git("checkout", "-q", "feature")
        done = repo.git("rebase", "-q", "main")
    elif operation == "cherry-pick":
        done = repo.git("cherry-pick", "feature")
    else:
        clone = HostileRepo(tmp_path / "clone", clock=repo.clock)
        clone.install = install
        repo.git("clone", "-q", "-b", "main", str(repo.path), str(clone.path))
        install.git_setup(clone)
        done = clone.git("pull", "-q", "--no-rebase", "--no-edit", "origin", "feature")
        repo = clone
    assert not marker.exists(), "the work tree's planning_core was imported"
    # git ignores a post- hook's failure: a hook that could not run or fix the plan says why here.
    assert "Traceback" not in done.stderr and "not fixed" not in done.stderr, done.stderr
    # The real driver and hook ran: both sides' tasks, the incoming #3 renumbered, its edge moved.
    tasks = by_subject(plan_is_whole(repo))
    assert set(tasks) == {"a on main", "b", "main3", "feat3", "feat4"}
    assert tasks["main3"]["id"] == 3 and tasks["feat3"]["id"] == 5 and tasks["feat4"]["blockedBy"] == [5]


def test_git_setup_again_replaces_what_an_earlier_one_wrote(tmp_path: Path) -> None:
    """A repository set up by a git-setup that wrote `python -m` (the work tree first on
    sys.path) and the strategy settings: running git-setup again leaves only the safe lines."""
    repo = Repo.create(tmp_path / "repo", setup=False)
    old = f"{sys.executable} -m planning_core.stores.files"
    repo.git("config", "merge.planning-mcp.driver", f"{old} driver %O %A %B %P")
    repo.git("config", "pull.twohead", "ort planning-mcp")
    repo.git("config", "pull.octopus", "planning-mcp")
    hook = repo.path / ".git" / "hooks" / "post-merge"
    hook.write_text(f'#!/bin/sh\necho mine\n{old} hook post-merge "$@" # planning-mcp git-setup\n')
    done = repo.cli("git-setup", "--root", str(repo.root))
    assert done.returncode == 0, done.stderr
    said = done.stdout.splitlines()  # one change a line
    assert said[0] == "planning-mcp git-setup:" and "  git config merge.planning-mcp.driver" in said
    assert any(line.startswith("  git config --unset pull.twohead ") for line in said)
    driver = repo.git("config", "merge.planning-mcp.driver").stdout
    assert f"{sys.executable} -E -P -m planning_core.stores.files driver" in driver
    lines = hook.read_text().splitlines()
    assert lines[:2] == ["#!/bin/sh", "echo mine"] and len(lines) == 3 and " -E -P -m " in lines[2]
    for key in ("pull.twohead", "pull.octopus"):
        assert repo.git("config", "--get", key, check=False).returncode == 1
    assert repo.git("config", "--get", "pull.rebase", check=False).returncode == 1  # nothing else touched


def test_every_command_git_setup_writes_runs_python_isolated(repo: Repo) -> None:
    """What git runs on its own after git-setup (the driver, the hooks) starts this Python
    with -E -P; the merge strategy's console script (which cannot carry those flags) is
    written nowhere: git runs it only for `git merge -s planning-mcp`, asked for by name."""
    config = repo.git("config", "--local", "--list").stdout
    hooks = [(repo.path / ".git" / "hooks" / name).read_text() for name in HOOKS]
    lines = [*config.splitlines(), *(line for hook in hooks for line in hook.splitlines())]
    written = [line for line in lines if "planning" in line]
    commands = [line for line in written if "planning_core" in line]
    assert len(commands) == 4, written  # the driver and three hooks
    isolated = re.compile(r"(=| \|\| )/\S+/python[0-9.]* -E -P -m planning_core\.stores\.files ")
    assert all(isolated.search(line) for line in commands), commands
    assert not [line for line in written if "git-merge-planning-mcp" in line or "pull." in line], written
    attributes = (repo.path / ".gitattributes").read_text()
    assert "merge=planning-mcp" in attributes and "git-merge" not in attributes


def test_plain_git_still_merges_where_planning_mcp_is_not_on_path(repo: Repo) -> None:
    """Another shell, an IDE or CI, without planning-mcp's commands on PATH: fast-forward and
    true merges work as in any repository, and the task files still merge."""
    diverge(repo)
    env = {**repo.env(), "PATH": os.pathsep.join(p for p in ("/usr/local/bin", "/usr/bin", "/bin"))}
    assert shutil.which("git-merge-planning-mcp", path=env["PATH"]) is None

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=repo.path, env=env, capture_output=True, text=True, timeout=120)

    assert git("checkout", "-q", "-b", "ahead", "main").returncode == 0
    (repo.path / "README").write_text("ahead\n")
    assert git("commit", "-qam", "ahead").returncode == 0
    assert git("checkout", "-q", "main").returncode == 0
    forward = git("merge", "--ff-only", "ahead")
    assert forward.returncode == 0, forward.stderr
    merged = git("merge", "--no-edit", "feature")
    assert merged.returncode == 0, merged.stderr
    tasks = by_subject(plan_is_whole(repo))
    assert tasks["feat3"]["id"] == 5 and tasks["feat4"]["blockedBy"] == [5]


def test_the_driver_leaves_files_it_does_not_own_to_git(repo: Repo) -> None:
    """A `.gitattributes` line sending other files to the driver: they conflict as in plain git,
    with git's markers, and neither side is dropped."""
    with (repo.path / ".gitattributes").open("a") as f:
        f.write("*.txt merge=planning-mcp\n")
    (repo.path / "notes.txt").write_text("one\n")
    repo.commit("notes")
    repo.git("checkout", "-q", "-b", "other")
    (repo.path / "notes.txt").write_text("theirs\n")
    repo.commit("theirs")
    repo.git("checkout", "-q", "main")
    (repo.path / "notes.txt").write_text("ours\n")
    repo.commit("ours")
    merged = repo.git("merge", "--no-edit", "other", check=False)
    assert merged.returncode != 0 and "CONFLICT" in merged.stdout
    text = (repo.path / "notes.txt").read_text()
    assert text.startswith("<<<<<<< HEAD\nours\n") and "=======\ntheirs\n>>>>>>> " in text


def _task(folder: Path, task_id: int, subject: str, created: str) -> None:
    doc = json.loads((folder / "task_1.json").read_text())
    doc.update(id=task_id, subject=subject, createdAt=created, blockedBy=[], blocks=[])
    (folder / f"task_{task_id}.json").write_text(json.dumps(doc, indent=2) + "\n")


def test_a_committed_link_or_a_spaced_folder_name_leads_no_write_out_of_the_plans(repo: Repo, tmp_path: Path) -> None:
    """A plan folder named `x .. y` and a `.merge-notes` committed as a link to a file outside:
    the fix-up works in that folder only, writes nothing through the link, and says so."""
    repo.new_plan(["a", "b"])
    odd = repo.root / "todo" / "2026-12-01-x .. y"
    repo.git("mv", str(repo.folder()), str(odd))
    victim = tmp_path / "victim"
    victim.write_text("startup file\n")
    (odd / ".merge-notes").symlink_to(victim)
    repo.git("add", "-f", str(odd / ".merge-notes"))
    repo.commit("odd plan")
    repo.git("checkout", "-q", "-b", "feature")
    _task(odd, 3, "feat3", "2026-12-01T10:00:00Z")
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    _task(odd, 3, "main3", "2026-12-01T11:00:00Z")
    repo.commit("main")
    merged = repo.git("merge", "--no-edit", "feature")
    assert victim.read_text() == "startup file\n"
    assert "#3 -> #4 (from feature)" in merged.stderr and ".merge-notes is not a regular file" in merged.stderr
    assert json.loads((odd / "task_4.json").read_text())["subject"] == "feat3"
    assert not (repo.path.parent / ".highwatermark").exists() and not (repo.path.parent / ".lock").exists()


def test_the_server_reads_no_merge_notes_through_a_link_and_escapes_them(repo: Repo, tmp_path: Path) -> None:
    secret = tmp_path / "key"
    secret.write_text("PRIVATE KEY TEXT\n")
    repo.new_plan(["a"])
    notes = repo.folder() / ".merge-notes"
    notes.symlink_to(secret)
    first = repo.cli("--root", str(repo.root))
    assert "PRIVATE KEY" not in first.stderr and ".merge-notes not read" in first.stderr
    assert notes.is_symlink() and secret.read_text() == "PRIVATE KEY TEXT\n"
    notes.unlink()
    notes.write_text("plan x: \x1b]0;pwned\x07 \x1b[31mred\n")
    second = repo.cli("--root", str(repo.root))
    assert "\x1b" not in second.stderr and "\\x1b]0;pwned\\x07 \\x1b[31mred" in second.stderr
