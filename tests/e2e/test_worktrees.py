"""Where the plans are by default (server/common/default_root.py), with real git in
temporary repositories and real server children started with default settings, as an
MCP client starts them: in the folder they work in, no --root, no PLANNING_MCP_ROOT.

Inside a git repository every worktree shares the main working tree's `.planning`; the
startup line, `status` and the Claude Code hook agree; `--root ./.planning` keeps a
worktree apart. Layouts whose git files lead nowhere usable (bare, submodule, a moved
or deleted main worktree, a `.git` file naming nothing) serve ./.planning with a note."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import StdioServerParameters

from planning_core import Planner
from planning_core.stores.files import FileStore
from server.common.default_root import default_root
from tests.support.mcp import connect, text_of
from tests.support.procs import REPO, child_env, console_script
from tests.support.waits import bound

SERVING = "(Ctrl+C to stop)"


def user_env() -> dict[str, str]:
    """A user's environment: nothing names a store, so the default root decides."""
    return {k: v for k, v in child_env().items() if k not in ("PLANNING_MCP_ROOT", "PLANNING_MCP_STORE")}


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,  # the user's own settings play no part
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=bound(30),
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def repository(tmp_path: Path, name: str = "shop") -> Path:
    main = tmp_path / name
    main.mkdir()
    git(main, "init", "-q")
    (main / "README.md").write_text("# shop\n")
    git(main, "add", "README.md")
    git(main, "commit", "-q", "-m", "init")
    return main


def worktree(main: Path, name: str) -> Path:
    path = main.parent / name
    git(main, "worktree", "add", "-q", str(path))
    return path


def cli(cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), *args],
        cwd=cwd,
        env=user_env(),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=bound(30),
    )


def served_line(cwd: Path, *args: str) -> tuple[str, str]:
    """A stdio server started in `cwd` that sees the end of its input at once: its
    startup line, and what it printed to stderr before it."""
    r = cli(cwd, *args)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    *before, line = r.stderr.splitlines()
    assert line.endswith(SERVING), r.stderr
    return line, "\n".join(before)


def params(cwd: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=console_script(), args=list(args), env=user_env(), cwd=str(cwd))


async def test_two_worktrees_share_one_plan_by_default(tmp_path: Path) -> None:
    main = repository(tmp_path)
    feature = worktree(main, "shop-feature")
    async with (
        connect(params(main), tmp_path / "main.err") as in_main,
        connect(params(feature), tmp_path / "feature.err") as in_feature,
    ):
        made = await in_feature.call_tool(
            "PlanCreate",
            {
                "title": "Add auth",
                "analysis": "a",
                "approach": "b",
                "tasks": [{"subject": "Login", "description": "d"}],
            },
        )
        assert not made.is_error, text_of(made)
        name = made.structured_content["plan"]["name"]
        added = await in_main.call_tool("TaskCreate", {"subject": "Logout", "description": "d", "plan": name})
        assert not added.is_error, text_of(added)
        listed = text_of(await in_feature.call_tool("TaskList", {"plan": name}))
        assert "#1 [pending] Login" in listed and "#2 [pending] Logout" in listed, listed
    shared = main / ".planning"
    assert (shared / "todo" / name / "task_2.json").is_file()
    assert not (feature / ".planning").exists()
    line = f"plans in {shared} (main worktree of {main}) {SERVING}"
    assert (tmp_path / "feature.err").read_text().splitlines()[-1].endswith(line)


async def test_root_dot_planning_keeps_a_worktree_apart(tmp_path: Path) -> None:
    main = repository(tmp_path)
    alone = worktree(main, "shop-alone")
    async with (
        connect(params(main), tmp_path / "main.err") as in_main,
        connect(params(alone, "--root", "./.planning"), tmp_path / "alone.err") as in_alone,
    ):
        made = await in_main.call_tool("PlanCreate", {"title": "Shared work", "analysis": "a", "approach": "b"})
        assert not made.is_error, text_of(made)
        assert "Shared work" not in text_of(await in_alone.call_tool("PlanList", {}))
        mine = await in_alone.call_tool("PlanCreate", {"title": "My own", "analysis": "a", "approach": "b"})
        assert not mine.is_error, text_of(mine)
        assert "My own" not in text_of(await in_main.call_tool("PlanList", {}))
    assert [p.name for p in (alone / ".planning" / "todo").iterdir()] == [mine.structured_content["plan"]["name"]]
    assert (tmp_path / "alone.err").read_text().splitlines()[-1].endswith(f"plans in {alone / '.planning'} {SERVING}")


def test_status_and_the_hook_in_a_deep_folder_of_a_worktree_read_the_main_plans(tmp_path: Path) -> None:
    main = repository(tmp_path)
    feature = worktree(main, "shop-feature")
    served_line(main)  # makes main/.planning
    Planner(FileStore(main / ".planning")).create_plan("Add auth", analysis="a", approach="b")
    deep = feature / "src" / "deep"
    deep.mkdir(parents=True)
    status = cli(deep, "status")
    assert status.returncode == 0, status.stderr
    assert "add-auth" in status.stdout, status.stdout
    board = cli(deep, "board")
    assert board.returncode == 0 and "add-auth" in board.stdout, board.stderr
    payload = json.dumps({"session_id": "s1", "cwd": str(deep), "hook_event_name": "SessionStart"})
    hook = cli(deep, "hook", "SessionStart", stdin=payload)
    assert hook.returncode == 0, hook.stderr
    assert "add-auth" in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]


def test_outside_git_the_nearest_planning_above_is_used(tmp_path: Path) -> None:
    project = tmp_path / "project"
    deep = project / "src" / "deep"
    deep.mkdir(parents=True)
    Planner(FileStore(project / ".planning")).create_plan("Add auth", analysis="a", approach="b")
    status = cli(deep, "status")
    assert status.returncode == 0, status.stderr
    line, _ = served_line(deep)
    assert line.endswith(f"plans in {project / '.planning'} (the nearest .planning above {deep}) {SERVING}")
    assert not (deep / ".planning").exists()


def test_the_planning_folder_tells_git_what_to_leave_out(tmp_path: Path) -> None:
    """What a committed .planning/ holds: the plans, never a lock, the hook's state or a temp file."""
    main = repository(tmp_path)
    served_line(main)
    planner = Planner(FileStore(main / ".planning"))
    name = planner.create_plan("Add auth", analysis="a", approach="b").name
    planner.create_task(name, "Login", "d")
    payload = {"session_id": "s1", "cwd": str(main), "tool_name": "Bash", "tool_input": {}, "tool_response": {}}
    assert cli(main, "hook", "PostToolUse", stdin=json.dumps(payload)).returncode == 0
    plan = main / ".planning" / "todo" / name
    (plan / ".task_1.json.123.abcd.tmp").write_text("{")  # a crash's leftover
    assert (plan / ".lock").exists() and (main / ".planning" / ".hooks").is_dir()
    untracked = git(main, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert sorted(untracked) == [
        "?? .planning/.gitignore",
        f"?? .planning/todo/{name}/.highwatermark",
        f"?? .planning/todo/{name}/plan.md",
        f"?? .planning/todo/{name}/task_1.json",
    ]
    mine = "# my own rules\n"
    (main / ".planning" / ".gitignore").write_text(mine)
    served_line(main)
    assert (main / ".planning" / ".gitignore").read_text() == mine  # never overwritten


def _bare_worktree(tmp_path: Path) -> tuple[Path, str]:
    main = repository(tmp_path)
    git(tmp_path, "clone", "-q", "--bare", str(main), "shop.git")
    path = tmp_path / "from-bare"
    git(tmp_path / "shop.git", "worktree", "add", "-q", str(path))
    return path, "a worktree of the bare repository"


def _inside_bare(tmp_path: Path) -> tuple[Path, str]:
    main = repository(tmp_path)
    git(tmp_path, "clone", "-q", "--bare", str(main), "shop.git")
    return tmp_path / "shop.git", "is a bare git repository"


def _submodule(tmp_path: Path) -> tuple[Path, str]:
    library = repository(tmp_path, "library")
    app = repository(tmp_path, "app")
    git(app, "submodule", "add", "-q", str(library), "lib")
    return app / "lib", "a submodule's or a separate git directory"


def _main_moved(tmp_path: Path) -> tuple[Path, str]:
    main = repository(tmp_path)
    path = worktree(main, "shop-feature")
    main.rename(tmp_path / "shop-moved")
    return path, "was the main worktree moved or deleted?"


def _main_deleted(tmp_path: Path) -> tuple[Path, str]:
    main = repository(tmp_path)
    path = worktree(main, "shop-feature")
    shutil.rmtree(main)
    return path, "was the main worktree moved or deleted?"


def _git_file_to_nowhere(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "odd"
    path.mkdir()
    (path / ".git").write_text(f"gitdir: {tmp_path / 'gone' / '.git' / 'worktrees' / 'odd'}\n")
    return path, "which does not exist"


def _git_file_of_garbage(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "odd"
    path.mkdir()
    (path / ".git").write_bytes(b"\xff\xfe not a link\n")
    return path, "not a `gitdir: <path>` link"


def _git_file_to_a_link_loop(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "odd"
    path.mkdir()
    (path / "loop").symlink_to("loop")
    (path / ".git").write_text("gitdir: loop\n")
    return path, "which does not exist"


def _commondir_link_loop(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "odd"
    gitdir = tmp_path / "gitdir"
    gitdir.mkdir()
    (gitdir / "loop").symlink_to("loop")
    (gitdir / "commondir").write_text("loop\n")
    path.mkdir()
    (path / ".git").write_text(f"gitdir: {gitdir}\n")
    return path, "does not exist"


ODD_LAYOUTS: dict[str, Callable[[Path], tuple[Path, str]]] = {
    "bare-worktree": _bare_worktree,
    "inside-bare": _inside_bare,
    "submodule": _submodule,
    "main-moved": _main_moved,
    "main-deleted": _main_deleted,
    "git-file-to-nowhere": _git_file_to_nowhere,
    "git-file-of-garbage": _git_file_of_garbage,
    "git-file-to-a-link-loop": _git_file_to_a_link_loop,
    "commondir-link-loop": _commondir_link_loop,
}


@pytest.mark.parametrize("layout", list(ODD_LAYOUTS))
def test_git_files_that_lead_nowhere_serve_dot_planning_with_a_note(tmp_path: Path, layout: str) -> None:
    here, why = ODD_LAYOUTS[layout](tmp_path)
    before = sorted(str(p) for p in tmp_path.rglob("*") if p.is_dir() and ".git" not in p.parts)
    line, said = served_line(here)
    assert line.endswith(f"plans in {here / '.planning'} {SERVING}")
    [note] = [n for n in said.splitlines() if n.startswith("planning-mcp: ")]
    assert why in note and f"plans in {here / '.planning'} (pass --root DIR to choose)" in note, note
    after = sorted(str(p) for p in tmp_path.rglob("*") if p.is_dir() and ".git" not in p.parts)
    made = {str(here / ".planning"), str(here / ".planning" / "todo"), str(here / ".planning" / "done")}
    assert set(after) - set(before) <= made  # nothing elsewhere (the root itself waits for a first plan)
    status = cli(here, "status")  # a command takes the same root the same way, without a traceback
    assert "Traceback" not in status.stderr and str(here / ".planning") in status.stdout + status.stderr, status


def test_the_suite_never_serves_from_its_own_checkout() -> None:
    """This checkout may be a linked worktree of another: a test's child with default
    settings must not reach that main tree's .planning (tests/conftest.py's guard)."""
    assert not Path.cwd().resolve().is_relative_to(REPO.resolve())
    assert os.environ.get("PLANNING_MCP_ROOT")


def test_inside_a_git_folder_or_a_deep_folder_the_repository_decides(tmp_path: Path) -> None:
    main = repository(tmp_path)
    feature = worktree(main, "shop-feature")
    deep = feature / "a" / "b"
    deep.mkdir(parents=True)
    for here in (main / ".git" / "refs", main / ".git" / "worktrees" / "shop-feature", deep, main):
        found = default_root(here)
        assert (found.folder, found.why, found.note) == (main / ".planning", f"main worktree of {main}", None), here
