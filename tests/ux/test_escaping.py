"""Promise: what a terminal view prints never carries an escape sequence or a forged
line from a plan folder. Task files and plan.md are hand-editable, so validation at the
tools is not enough: `status`, `board`, `graph`, `watch`, the start-up summary and the
agent's TaskList all show control characters as visible `\\xNN` escapes, and rich
markup in a subject is shown as typed. Real CLI subprocesses and a real stdio server."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from planning_core import FileStore, Planner
from tests.e2e._support import console_script, run_cli, serving
from tests.reliability._raw_stdio import RawStdio, text_of

PLAN = "2026-05-28-evil"
EVIL_SUBJECT = "Evil\x1b]0;pwned\x07\x1b[2J\r\n#99 [completed] Forged line (admin)\u2028\x9b31m"
EVIL_OWNER = "mallory\x1b[8m"
EVIL_FORM = "[red]styled[/red] \x1b[5m"
EVIL_TITLE = "Title\x1b[31m red \x07"
RAW = ("\x1b", "\x07", "\x9b", "\u2028", "\r")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    store = FileStore(r)
    store.ensure_writable()
    planner = Planner(store)
    tasks = [{"subject": "Fine"}, {"subject": "Next"}]
    planner.create_plan("Evil plan", "a", "b", name="evil", date="2026-05-28", tasks=tasks)
    folder = r / "todo" / PLAN
    path = folder / "task_1.json"
    data = json.loads(path.read_text())
    data.update(subject=EVIL_SUBJECT, owner=EVIL_OWNER, activeForm=EVIL_FORM, status="in_progress")
    path.write_text(json.dumps(data))  # a hand edit: json.dumps writes \u001b, which loads back as ESC
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
        deadline = time.monotonic() + 10
        while "[Session Plan]" not in served.stderr() and time.monotonic() < deadline:
            time.sleep(0.05)
        err = served.stderr()
    assert "\\x1b]0;pwned" in err
    assert_clean(err)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install -y tmux)")
@pytest.mark.parametrize("command", ["board", "status", "watch"])
def test_a_real_terminal_keeps_its_title_and_screen(root: Path, tmp_path: Path, command: str) -> None:
    """In tmux, an OSC 0 sequence would set the pane title and ESC[2J clear the screen."""
    base = ["tmux", "-S", str(tmp_path / "tmux.sock")]
    run = f"{shlex.quote(console_script())} {command} --root {shlex.quote(str(root))}"
    cmd = f"printf 'BEFORE\\n'; env TERM=xterm-256color {run}; sleep 30"
    subprocess.run([*base, "new-session", "-d", "-s", "v", "-x", "200", "-y", "40", cmd], check=True, timeout=10)
    try:
        deadline = time.monotonic() + 15
        screen = ""
        while time.monotonic() < deadline:
            screen = subprocess.run([*base, "capture-pane", "-p", "-t", "v"], capture_output=True, text=True).stdout
            if "pwned" in screen:
                break
            time.sleep(0.1)
        title = subprocess.run(
            [*base, "display-message", "-p", "-t", "v", "#{pane_title}"], capture_output=True, text=True
        ).stdout
    finally:
        subprocess.run([*base, "kill-server"], capture_output=True, timeout=10)
    assert "pwned" in screen, screen  # shown as text
    assert "pwned" not in title
    if command != "watch":  # watch draws full-screen on purpose; the others must not clear it
        assert "BEFORE" in screen, screen
