"""The first ten minutes: the startup line that says where the plans go, client
configs left unedited, `status` on a typo, output piped into `head`, and `serve --help`.
Everything through the real console script, in a working directory of the test's own."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planning_core import Planner
from planning_core.stores.files import FileStore
from server import __version__
from server.cli import ROOT_PLACEHOLDER, main
from tests.support.procs import REPO, child_env, console_script, serving
from tests.support.seed import FORK, PLAN_NAME, seed_root
from tests.support.waits import bound


def user_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """A user's environment: no PLANNING_MCP_ROOT unless the test sets one (the suite's
    guard sets one for every test), so ./.planning is the default as for a new user."""
    env = {k: v for k, v in child_env().items() if k != "PLANNING_MCP_ROOT"}
    return env | (extra or {})


def cli(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), *args],
        capture_output=True,
        text=True,
        timeout=bound(30),
        cwd=cwd,
        env=user_env(env),
        stdin=subprocess.DEVNULL,  # a stdio server sees the end of its input at once
    )


def startup_line(transport: str, root: Path) -> str:
    return f"planning-mcp {__version__}: serving MCP over {transport}; plans in {root} (Ctrl+C to stop)"


@pytest.mark.parametrize(
    ("args", "folder"),
    [([], ".planning"), (["--root", "sub/.planning"], "sub/.planning"), (["serve", "--root", "x"], "x")],
    ids=["default", "relative", "serve"],
)
def test_stdio_says_what_it_serves_and_where_the_plans_are(args: list[str], folder: str, project: Path) -> None:
    (project / "sub").mkdir()  # a root's parent folder must exist (a missing one is refused as a typo)
    r = cli(args, cwd=project)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[-1] == startup_line("stdio", project / folder)  # absolute, resolved
    assert r.stdout == ""


@pytest.mark.parametrize(("transport", "name", "path"), [("http", "streamable HTTP", "/mcp"), ("sse", "SSE", "/sse")])
def test_http_and_sse_say_where_the_plans_are(transport: str, name: str, path: str, tmp_path: Path) -> None:
    root = tmp_path / "plans"
    with serving(tmp_path, transport, root=root) as srv:
        lines = srv.stderr().splitlines()
    url = f"http://127.0.0.1:{srv.port}{path}"
    assert f"planning-mcp {__version__}: serving {url} (MCP over {name}); plans in {root} (Ctrl+C to stop)" in lines
    assert sum("serving" in line for line in lines) == 1  # one line says what, how and where


PLACEHOLDERS = [
    "/ABSOLUTE/PATH/.planning",  # mcp.json.example
    "/ABSOLUTE/PATH/project/.planning",  # the README's Desktop entry
    "${workspaceFolder}/.planning",  # a client that does not expand VS Code's variable
    "C:\\Users\\me\\proj\\.planning",  # a Windows config copied to Linux or macOS
    ".planning\\sub",
]
COMMANDS = [
    [],
    ["serve", "--transport", "http", "--port", "0"],
    ["status"],
    ["status", "--json"],
    ["board"],
    ["graph"],
    ["watch", "--once"],
]


@pytest.mark.parametrize("placeholder", PLACEHOLDERS)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]) or "stdio")
def test_an_unedited_root_is_refused_with_what_to_do(
    placeholder: str,
    command: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main([*command, "--root", placeholder]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"planning-mcp: --root {placeholder} ")
    assert "in your MCP client's config, write the absolute path of your project's .planning folder" in err
    assert list(tmp_path.iterdir()) == []  # nothing created under its name
    assert not Path("/ABSOLUTE").exists()


@pytest.mark.parametrize("placeholder", PLACEHOLDERS[::2])
def test_an_unedited_environment_root_is_refused_too(placeholder: str, project: Path) -> None:
    for args in ([], ["status"], ["board"]):
        r = cli(args, cwd=project, env={"PLANNING_MCP_ROOT": placeholder})
        assert (r.returncode, r.stdout) == (2, "")
        assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"planning-mcp: PLANNING_MCP_ROOT={placeholder} ")
    assert list(project.iterdir()) == []
    assert not Path("/ABSOLUTE").exists()


def test_the_refused_placeholder_is_the_one_the_docs_use() -> None:
    for doc in ("README.md", "mcp.json.example"):
        assert f"{ROOT_PLACEHOLDER}/" in (REPO / doc).read_text(encoding="utf-8")


def test_unusual_but_real_roots_are_served(tmp_path: Path) -> None:
    """Only the placeholders are refused: a `$`, braces or spaces in a real folder name are fine."""
    for name in ("$HOME-literal", "{x}", "my plans"):
        root = tmp_path / name / ".planning"
        seed_root(root, FORK)
        r = cli(["board", "--root", str(root)], cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert PLAN_NAME in r.stdout


def test_status_on_a_missing_folder_is_the_same_error_as_board(tmp_path: Path) -> None:
    typo = tmp_path / "typo"
    board = cli(["board", "--root", str(typo)], cwd=tmp_path)
    message = f"planning-mcp: no planning folder at {typo}; "
    assert board.stderr.startswith(message)
    for args in (["status"], ["status", "--json"]):
        r = cli([*args, "--root", str(typo)], cwd=tmp_path)
        assert (r.returncode, r.stdout, r.stderr) == (2, "", board.stderr)
    assert not typo.exists()


PRINTING = [
    ["status"],
    ["status", "--json"],
    ["board"],
    ["board", "--json"],
    ["graph"],
    ["graph", "auth"],
    ["watch", "--once"],
]


@pytest.mark.parametrize("command", PRINTING, ids=" ".join)
def test_printing_into_a_pipe_whose_reader_left_is_quiet(command: list[str], root: Path, seeded: str) -> None:
    """`planning-mcp graph PLAN | head` once head has exited: 141 (128 + SIGPIPE, as a
    program ended by SIGPIPE reports), nothing on stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        r = subprocess.run(
            [console_script(), *command, "--root", str(root)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=bound(30),
            env=child_env(),
        )
    finally:
        os.close(write_end)
    assert (r.returncode, r.stderr) == (141, "")


@pytest.mark.parametrize("command", [["board", "--json"], ["export"]], ids=" ".join)
def test_big_output_into_head(command: list[str], root: Path) -> None:
    """The real pipeline: more output than a pipe holds, head takes one line and leaves."""
    store = FileStore(root)
    store.ensure_writable()
    Planner(store).create_plan(
        "Big", analysis="a", approach="b", tasks=[{"subject": f"task number {i}" * 4} for i in range(400)]
    )
    board = subprocess.Popen(
        [console_script(), *command, "--root", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    assert board.stdout is not None and board.stderr is not None
    head = subprocess.run(["head", "-1"], stdin=board.stdout, capture_output=True, text=True, timeout=bound(30))
    board.stdout.close()
    assert board.wait(timeout=bound(30)) == 141
    assert head.stdout.startswith("{") and board.stderr.read() == b""


def test_live_watch_into_a_pipe_whose_reader_left_is_quiet(root: Path, seeded: str) -> None:
    read_end, write_end = os.pipe()
    watch = subprocess.Popen(
        [console_script(), "watch", "--interval", "0.1", "--root", str(root)],
        stdout=write_end,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as reader:
            first = b""
            while b"2/4 done" not in first:  # the first frame: it is watching
                chunk = reader.read1(65536)
                assert chunk, first
                first += chunk
        # The reader has left; the next frame (after a change) meets the closed pipe.
        Planner(FileStore(root)).update_task(seeded, 3, status="completed")
        assert watch.wait(timeout=bound(20)) == 141
        assert watch.stderr is not None and watch.stderr.read() == b""
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait(timeout=bound(10))


def test_help_names_every_option(tmp_path: Path) -> None:
    serve = cli(["serve", "--help"], cwd=tmp_path).stdout
    assert "--root DIR" in serve and "--hooks FILE" in serve
    assert "SUB_" not in serve
    for words in ("stdio: a client starts the server", "http: streamable HTTP at http://HOST:PORT/mcp", "sse:"):
        assert words in " ".join(serve.split())
    for command in ("status", "board", "graph", "watch", "hook"):
        text = cli([command, "--help"], cwd=tmp_path).stdout
        assert "--root DIR" in text and "SUB_" not in text, text
    assert "--interval SECONDS" in cli(["watch", "--help"], cwd=tmp_path).stdout


def test_the_startup_line_comes_quickly(project: Path) -> None:
    """It is the user's sign that the server is up: printed before any client speaks."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [console_script()],
        cwd=project,
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=user_env(),
    )
    try:
        assert proc.stderr is not None
        seen = ""
        while "(Ctrl+C to stop)" not in seen:
            line = proc.stderr.readline().decode()
            assert line, seen
            seen += line
        assert time.monotonic() - started < bound(15)
        assert startup_line("stdio", project / ".planning") in seen
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=bound(20)) == 0


@pytest.mark.parametrize("system", ["win32", "cygwin"])
def test_an_unsupported_system_is_refused_in_one_line(system: str, tmp_path: Path) -> None:
    """Elsewhere than Linux and macOS the command stops before anything else, with one line
    naming the systems it runs on (not an ImportError's traceback from fcntl)."""
    r = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.platform = {system!r}; from server.cli import main; main()"],
        capture_output=True,
        text=True,
        timeout=bound(30),
        env=child_env(),
        cwd=tmp_path,
    )
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"planning-mcp: runs on Linux and macOS only, not {system} (on Windows, run it inside WSL)\n"
