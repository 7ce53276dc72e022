"""`planning-mcp copy --from SRC --to DST`, the real command in a subprocess: files ->
files gives the same tree byte for byte; files -> PostgreSQL -> files gives the same task
files byte for byte; a second run changes nothing; a refused plan and an unreachable
store exit 2; a password never reaches the output."""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from planning_core import FileStore, Planner
from tests.support.files import edit_task, tree_state
from tests.support.pg import fresh_database_url
from tests.support.procs import free_port, run_cli
from tests.support.seed import PLAN_DATE, chain, make_plan, seed_root
from tests.support.waits import bound

TIMEOUT = bound(90)  # a cold start on a loaded 2-core machine, plus connecting to the database
PASSWORD = "s3cr3t-pw"  # the test cluster trusts local connections: any password works
SEED = f"{PLAN_DATE}-add-auth"
SHIPPED = f"{PLAN_DATE}-shipped"
TRIMMED = f"{PLAN_DATE}-trimmed"


def source_root(root: Path) -> Path:
    """The seed (edges, an owner) with metadata and an extra field, a plan whose last
    task was deleted, and an archived plan."""
    seed_root(root)
    planner = Planner(FileStore(root))
    planner.update_task(SEED, 4, metadata={"ticket": "AUTH-4"})
    edit_task(root / "todo" / SEED, 2, estimate={"hours": 3})
    make_plan(root, "trimmed", chain(3))
    planner.update_task(TRIMMED, 3, status="deleted")
    make_plan(root, "shipped", chain(1))
    planner.update_task(SHIPPED, 1, status="completed")
    planner.archive(SHIPPED)
    return root


def copy(src: str | Path, dst: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli(["copy", "--from", str(src), "--to", str(dst)], timeout=TIMEOUT)


def with_password(url: str) -> str:
    parts = urlsplit(url)
    netloc = f"{parts.username}:{PASSWORD}@{parts.hostname}:{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def assert_lines(r: subprocess.CompletedProcess[str], outcome: str) -> None:
    """One line per plan, oldest first, each with `outcome`, then the summary."""
    lines = r.stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in lines[:-1]] == [SEED, SHIPPED, TRIMMED], r.stdout
    assert all(outcome in line for line in lines[:-1]), r.stdout
    assert lines[-1].startswith("3 plans from "), r.stdout


def test_files_to_files_is_byte_identical_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    src = source_root(tmp_path / "src")
    dst = tmp_path / "dst"
    first = copy(src, dst)
    assert first.returncode == 0, first.stderr
    assert_lines(first, ": copied")
    assert "3 copied, 0 already identical, 0 refused" in first.stdout
    assert tree_state(dst) == tree_state(src)

    again = copy(src, dst)
    assert again.returncode == 0, again.stderr
    assert_lines(again, "identical")
    assert "0 copied, 3 already identical, 0 refused" in again.stdout
    assert tree_state(dst) == tree_state(src)


def test_a_different_plan_of_the_same_name_is_refused_with_exit_2(tmp_path: Path) -> None:
    src = source_root(tmp_path / "src")
    dst = tmp_path / "dst"
    seed_root(dst, in_progress=False)
    before = tree_state(dst / "todo" / SEED)
    r = copy(src, dst)
    assert r.returncode == 2, r.stdout + r.stderr
    refused = next(line for line in r.stdout.splitlines() if line.startswith(SEED))
    assert "REFUSED: a different plan of this name is in the target" in refused
    assert "1 refused" in r.stdout.splitlines()[-1]
    assert tree_state(dst / "todo" / SEED) == before  # never overwritten
    assert (dst / "done" / SHIPPED).is_dir() and (dst / "todo" / TRIMMED).is_dir()  # the others went


def test_a_missing_source_folder_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    r = copy(tmp_path / "typo", tmp_path / "dst")
    assert r.returncode == 2
    assert r.stderr == f"planning-mcp: no planning folder at {tmp_path / 'typo'} to copy from\n"
    assert not (tmp_path / "typo").exists()


def test_files_to_postgres_to_files_gives_byte_identical_task_files(tmp_path: Path) -> None:
    src = source_root(tmp_path / "src")
    url = with_password(fresh_database_url())
    there = copy(src, url)
    assert there.returncode == 0, there.stdout + there.stderr
    assert_lines(there, ": copied")
    assert PASSWORD not in there.stdout + there.stderr
    parts = urlsplit(url)
    assert f"{parts.hostname}:{parts.port}{parts.path}" in there.stdout.splitlines()[-1]  # named, no password

    again = copy(src, url)
    assert again.returncode == 0, again.stderr
    assert "0 copied, 3 already identical, 0 refused" in again.stdout

    back = tmp_path / "back"
    home = copy(url, back)
    assert home.returncode == 0, home.stdout + home.stderr
    assert_lines(home, ": copied")
    assert tree_state(back) == tree_state(src)
    for name, where in ((SEED, "todo"), (TRIMMED, "todo"), (SHIPPED, "done")):
        for task_file in sorted((src / where / name).glob("task_*.json")):
            assert (back / where / name / task_file.name).read_bytes() == task_file.read_bytes()
    assert Planner(FileStore(back)).create_task(TRIMMED, "after the round trip").id == 4  # #3 stays burnt


def test_an_unreachable_database_exits_2_without_the_password(tmp_path: Path) -> None:
    src = source_root(tmp_path / "src")
    url = f"postgresql://planner:{PASSWORD}@127.0.0.1:{free_port()}/plans"  # nothing listens there
    r = copy(src, url)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith("planning-mcp: ") and r.stderr.count("\n") == 1, r.stderr
    assert "127.0.0.1" in r.stderr
    assert PASSWORD not in r.stdout + r.stderr
