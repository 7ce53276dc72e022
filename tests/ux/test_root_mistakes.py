"""A `--root` that is likely not the folder meant is refused with one line saying which
folder to use (exit 2), by the real command, and nothing is created: a project folder
whose plans are in its `.planning`, a folder of other files, a root whose parent folder
does not exist (a typo). What a planning root may be stays accepted: an existing planning
folder, an empty folder, a new folder in an existing one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from planning_core import Planner
from planning_core.stores.files import FileStore
from tests.support.procs import child_env, console_script
from tests.support.waits import bound

READERS = (["board"], ["status"], ["graph"], ["watch", "--once"])


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), *args],
        cwd=cwd,
        env=child_env(),
        stdin=subprocess.DEVNULL,  # a stdio server sees the end of its input at once
        capture_output=True,
        text=True,
        timeout=bound(30),
    )


def one_line_refusal(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("planning-mcp: --root "), r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    return r.stderr.strip()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder: its own files, and its plans in .planning (two of them)."""
    folder = tmp_path / "shop"
    (folder / "src").mkdir(parents=True)
    (folder / "README.md").write_text("# shop\n")
    planner = Planner(FileStore(folder / ".planning"))
    planner.store.prepare()
    planner.create_plan("Add auth", analysis="a", approach="b")
    planner.create_plan("Ship beta", analysis="a", approach="b")
    return folder


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("command", READERS, ids=lambda c: c[0])
def test_reading_a_project_folder_points_at_its_planning(project: Path, command: list[str]) -> None:
    line = one_line_refusal(cli(project.parent, *command, "--root", str(project)))
    assert f"{project} holds no plans, but {project / '.planning'} does" in line, line


def test_serving_a_project_folder_points_at_its_planning_and_creates_nothing(project: Path) -> None:
    before = listing(project)
    line = one_line_refusal(cli(project.parent, "--root", str(project)))
    assert f"did you mean {project / '.planning'}?" in line, line
    assert listing(project) == before  # no todo/ and done/ among the project's files


@pytest.mark.parametrize("command", [[], ["serve", "--transport", "http", "--port", "0"], ["board"]], ids=str)
def test_a_folder_of_other_files_is_refused(tmp_path: Path, command: list[str]) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        (folder / name).write_text("x")
    line = one_line_refusal(cli(tmp_path, *command, "--root", str(folder)))
    assert "holds other files (a.txt, b.txt, c.txt, …) and no plans" in line, line
    assert f"e.g. {folder / '.planning'}" in line
    assert listing(folder) == ["a.txt", "b.txt", "c.txt", "d.txt"]


def test_a_root_in_a_missing_folder_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    deep = tmp_path / "projcet" / "src" / ".planning"  # a typo in a client's config
    line = one_line_refusal(cli(tmp_path, "--root", str(deep)))
    assert f"is in a folder that does not exist ({deep.parent}; a typo?)" in line, line
    assert not (tmp_path / "projcet").exists()


def test_what_a_root_may_be_is_served(project: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for root in (project / ".planning", empty, tmp_path / "new"):
        r = cli(tmp_path, "--root", str(root))
        assert r.returncode == 0, r.stderr
        assert f"plans in {root} (Ctrl+C to stop)" in r.stderr
    board = cli(tmp_path, "board", "--root", str(project / ".planning"))
    assert board.returncode == 0 and "Add auth" in board.stdout and "Ship beta" in board.stdout, board.stderr
