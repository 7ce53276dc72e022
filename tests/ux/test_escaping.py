"""Promise: what a terminal view prints never carries an escape sequence or a forged
line from a plan folder. Task files and plan.md are hand-editable, so validation at the
tools is not enough: `status`, `board`, `graph`, `watch`, the start-up summary and the
agent's TaskList all show control characters as visible `\\xNN` escapes, and rich
markup in a subject is shown as typed. Real CLI subprocesses and a real stdio server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planning_core import FileStore, Planner
from tests.e2e._support import run_cli
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
