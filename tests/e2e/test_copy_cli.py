"""`planning-mcp copy --from SRC --to DST`, the real command in a subprocess: files ->
files gives the same tree byte for byte; files -> PostgreSQL -> files gives the same task
files byte for byte; a second run changes nothing; a refused plan and an unreachable
store exit 2; a password never reaches the output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from planning_core import Planner
from planning_core.stores.files import FileStore
from tests.support.files import copied_state, edit_task, tree_state
from tests.support.pg import fresh_database_url
from tests.support.procs import child_env, console_script, free_port, run_cli
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
    assert copied_state(dst) == copied_state(src)

    again = copy(src, dst)
    assert again.returncode == 0, again.stderr
    assert_lines(again, "identical")
    assert "0 copied, 3 already identical, 0 refused" in again.stdout
    assert copied_state(dst) == copied_state(src)


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
    assert copied_state(back) == copied_state(src)
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


# -- damaged sources: every plan said, the others copied --------------------------------

LATIN1_DOC = b'{"id": 2, "subject": "Caf\xe9 login", "status": "pending", "blockedBy": [1]}'
MEMORY_BOUND_MIB = 400  # peak RSS of the copy with 12 sparse 60 MB task files (was 825 MiB)


def damage(src: Path, tmp_path: Path) -> None:
    """A Latin-1 byte in one of SEED's task files; a symlink, a FIFO, a folder and a
    misnamed copy where TRIMMED's task files would be."""
    (src / "todo" / SEED / "task_2.json").write_bytes(LATIN1_DOC)
    folder = src / "todo" / TRIMMED
    (folder / "task_4.json").symlink_to(tmp_path / "elsewhere.json")
    os.mkfifo(folder / "task_5.json")
    (folder / "task_6.json").mkdir()
    (folder / "task_07.json").write_bytes((folder / "task_1.json").read_bytes())


def line_of(r: subprocess.CompletedProcess[str], name: str) -> str:
    return next(line for line in r.stdout.splitlines() if line.startswith(name + " ") or line.startswith(name + ":"))


def test_files_to_postgres_reports_each_damaged_plan_and_copies_the_rest(tmp_path: Path) -> None:
    src = source_root(tmp_path / "src")
    damage(src, tmp_path)
    url = fresh_database_url()
    r = copy(src, url)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr == "", r.stderr
    seed = line_of(r, SEED)
    assert seed.startswith(f"{SEED} (active, 4 tasks): NOT COPIED: ") and "task_2.json" in seed, seed
    assert "not UTF-8" in seed and "writable" not in seed and "disk" not in seed, seed
    assert line_of(r, SHIPPED).endswith(": copied")
    trimmed = line_of(r, TRIMMED)
    assert trimmed.startswith(f"{TRIMMED} (active, 2 tasks): copied; LEFT BEHIND 4 entries "), trimmed
    for entry, why in (("task_4.json", "symbolic link"), ("task_5.json", "FIFO"), ("task_6.json", "directory")):
        assert f"{entry}: it is a {why}" in trimmed, trimmed
    assert "task_07.json: its name is not a task id" in trimmed, trimmed
    last = r.stdout.splitlines()[-1]
    assert "1 copied" not in last and "2 copied, 0 already identical, 0 refused, 1 not copied" in last, last

    back = tmp_path / "back"
    home = copy(url, back)  # what did get there comes back whole
    assert home.returncode == 0, home.stdout + home.stderr
    assert copied_state(back / "done" / SHIPPED) == copied_state(src / "done" / SHIPPED)
    assert sorted(p.name for p in (back / "todo" / TRIMMED).iterdir()) == [
        ".highwatermark",
        ".lock",
        "history.jsonl",
        "plan.md",
        "task_1.json",
        "task_2.json",
    ]
    assert (back / "todo" / TRIMMED / ".highwatermark").read_text() == "7\n"  # 4..7 were on disk: stay burnt
    assert not (back / "todo" / SEED).exists()


def test_a_source_row_that_is_no_plan_name_is_reported_and_the_others_copied(tmp_path: Path) -> None:
    """A hand-edited database row named ../../../escape sorts before every plan: it is
    refused by name, nothing is written outside the target, and every plan after it goes."""
    src = source_root(tmp_path / "src")
    url = fresh_database_url()
    assert copy(src, url).returncode == 0
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO planning_plans (name, plan_md) VALUES ('../../../escape', '# x')")
    dst = tmp_path / "a" / "b" / "c"
    dst.parent.mkdir(parents=True)  # a root in a missing folder is refused as a typo
    r = copy(url, dst)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout.splitlines()[0].startswith("../../../escape (active, 0 tasks): NOT COPIED: Invalid plan name")
    assert [line.split(" ", 1)[0] for line in r.stdout.splitlines()[1:-1]] == [SEED, SHIPPED, TRIMMED]
    assert "3 copied, 0 already identical, 0 refused, 1 not copied" in r.stdout.splitlines()[-1]
    assert copied_state(dst) == copied_state(src)
    assert sorted(os.listdir(tmp_path)) == ["a", "src"]


def test_sparse_task_files_do_not_take_the_copy_past_a_plans_bound(tmp_path: Path) -> None:
    """Twelve sparse task files of 60 MB each in one plan: the copy into PostgreSQL reads
    one plan's bound of them, names the others, and its peak memory stays bounded."""
    src = source_root(tmp_path / "src")
    for task_id in range(10, 22):
        with open(src / "todo" / TRIMMED / f"task_{task_id}.json", "wb") as f:
            f.truncate(60_000_000)
    url = fresh_database_url()
    measure = (
        "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
        "print('maxrss_kib', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)"
    )
    r = subprocess.run(
        [sys.executable, "-c", measure, console_script(), "copy", "--from", str(src), "--to", url],
        capture_output=True, text=True, timeout=TIMEOUT, env=child_env(), stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert r.returncode == 2, r.stdout + r.stderr
    peak_mib = int(r.stdout.splitlines()[-1].split()[1]) / 1024
    trimmed = line_of(r, TRIMMED)
    assert "NOT COPIED" in trimmed and "NUL" in trimmed, trimmed  # zeros: not text PostgreSQL can keep
    assert trimmed.count("a copy reads of one plan") == 11, trimmed  # the first fits the bound; the rest said
    assert line_of(r, SEED).endswith(": copied") and line_of(r, SHIPPED).endswith(": copied")
    assert peak_mib < MEMORY_BOUND_MIB, f"peak RSS {peak_mib:.0f} MiB"
    print(f"peak RSS of the copy: {peak_mib:.0f} MiB")
