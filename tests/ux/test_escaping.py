"""Promise: what a terminal view prints never carries an escape sequence or a forged
line from a plan folder. Task files and plan.md are hand-editable, so validation at the
tools is not enough: `status`, `board`, `graph`, `watch`, the start-up summary and the
agent's TaskList all show control characters as visible `\\xNN` escapes, and rich
markup in a subject is shown as typed. Real CLI subprocesses and a real stdio server."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.support.files import edit_task
from tests.support.mcp import text_of
from tests.support.procs import console_script, run_cli, serving, wait_until
from tests.support.raw_stdio import RawStdio
from tests.support.seed import make_plan
from tests.support.terminal import NO_TMUX, TMUX, Tmux
from tests.support.waits import bound

PLAN = "2026-05-28-evil"
EVIL_SUBJECT = "Evil\x1b]0;pwned\x07\x1b[2J\r\n#99 [completed] Forged line (admin)\u2028\x9b31m"
EVIL_OWNER = "mallory\x1b[8m"
EVIL_FORM = "[red]styled[/red] \x1b[5m"
EVIL_TITLE = "Title\x1b[31m red \x07"
RAW = ("\x1b", "\x07", "\x9b", "\u2028", "\r")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    tasks = [{"subject": "Fine"}, {"subject": "Next"}]
    folder = make_plan(r, "evil", tasks, title="Evil plan", analysis="a", approach="b")
    # a hand edit: json.dumps writes \u001b, which loads back as ESC
    edit_task(folder, 1, subject=EVIL_SUBJECT, owner=EVIL_OWNER, activeForm=EVIL_FORM, status="in_progress")
    md = folder / "plan.md"
    md.write_text(md.read_text().replace("# Evil plan", f"# {EVIL_TITLE}", 1))
    (folder / "task_2.json").write_text("{\x1b[2J broken")  # and a damaged file's reason
    return r


def assert_clean(out: str) -> None:
    for ch in RAW:
        assert ch not in out, f"{ch!r} reached the terminal: {out!r}"
    assert not any(line.startswith("#99") for line in out.splitlines()), out


@pytest.mark.parametrize("command", [["status"], ["board"], ["graph"], ["watch", "--once"]])
def test_terminal_views_escape_hand_edited_text(root: Path, command: list[str]) -> None:
    done = run_cli([*command, "--root", str(root)], env={"COLUMNS": "400", "TERM": "dumb"})
    assert done.returncode == 0, done
    assert_clean(done.stdout + done.stderr)
    assert "\\x1b]0;pwned\\x07" in done.stdout  # shown, visibly, not acted on
    if command[0] in ("board", "watch"):
        assert "\\x1b[31m" in done.stdout  # the plan.md title
    if command[0] == "watch":
        assert "[red]styled[/red]" in done.stdout  # rich markup shown as typed


@pytest.mark.parametrize("command", [["status", "--json"], ["board", "--json"]])
def test_json_views_round_trip_and_print_safely(root: Path, command: list[str]) -> None:
    done = run_cli([*command, "--root", str(root)])
    assert done.returncode == 0, done
    assert_clean(done.stdout)
    task = json.loads(done.stdout)["plans"][0]["tasks"][0]
    assert task["subject"] == EVIL_SUBJECT  # the JSON escapes decode to the stored value


def test_startup_summary_and_task_list_escape(root: Path, tmp_path: Path) -> None:
    srv = RawStdio(root, tmp_path / "stdio.stderr")
    try:
        srv.initialize()
        listed = text_of(srv.call("TaskList", {"plan": PLAN}))
        got = text_of(srv.call("TaskGet", {"taskId": 1, "plan": PLAN}))
    finally:
        srv.close()
    err = srv.stderr()
    assert "[Session Plan] Active tasks:" in err
    assert_clean(err)
    assert "\\x1b]0;pwned" in err
    assert_clean(listed)
    assert_clean(got)
    assert len([ln for ln in listed.splitlines() if ln.startswith("#")]) == 2  # no forged line


def test_http_banner_escapes(root: Path, tmp_path: Path) -> None:
    with serving(tmp_path, "http", root=root) as served:
        wait_until(lambda: "[Session Plan]" in served.stderr(), "the start-up summary on stderr", timeout=bound(10))
        err = served.stderr()
    assert "\\x1b]0;pwned" in err
    assert_clean(err)


@pytest.mark.skipif(TMUX is None, reason=NO_TMUX)
@pytest.mark.parametrize("command", ["board", "status", "watch"])
def test_a_real_terminal_keeps_its_title_and_screen(root: Path, tmp_path: Path, command: str) -> None:
    """In tmux, an OSC 0 sequence would set the pane title and ESC[2J clear the screen."""
    tmux = Tmux(tmp_path / "tmux.sock", "v")
    run = f"{shlex.quote(console_script())} {command} --root {shlex.quote(str(root))}"
    try:
        tmux.start(f"printf 'BEFORE\\n'; env TERM=xterm-256color {run}; sleep 30", width=200, height=40)
        screen = tmux.wait_for("pwned")  # the view has drawn the evil subject (as text)
        title = tmux.title()
    finally:
        tmux.kill()
    assert "pwned" in screen, screen  # shown as text
    assert "pwned" not in title
    if command != "watch":  # watch draws full-screen on purpose; the others must not clear it
        assert "BEFORE" in screen, screen
