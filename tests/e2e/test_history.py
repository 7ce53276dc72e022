"""The history as a user meets it, through real processes: a stdio server's TaskGet ends
with the task's last changes (by the session that made them), its `resume` prompt says what
happened lately, `planning-mcp log` pages the plan's log, and the Claude Code SessionStart
hook tells a resumed session what happened since it was last here."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
from mcp import Client
from mcp.types import Implementation

from planning_core import Planner
from planning_core.rendering.timeline import HISTORY_HEADING
from planning_core.stores.files import FileStore
from tests.support.mcp import server_params, text_of
from tests.support.procs import child_env, console_script, run_cli
from tests.support.seed import SUBJECTS, seed_plan
from tests.support.waits import bound


def _seeded(root: Path) -> str:
    return seed_plan(Planner(FileStore(root)))


def test_taskget_and_resume_over_stdio(tmp_path: Path) -> None:
    root = tmp_path / "root"
    plan = _seeded(root)

    async def run() -> tuple[str, str, str]:
        with anyio.fail_after(bound(60)):
            async with Client(server_params(root), client_info=Implementation(name="some-agent", version="1")) as c:
                done = await c.call_tool("TaskUpdate", {"taskId": 3, "status": "completed", "plan": plan})
                assert not done.is_error, text_of(done)
                got = text_of(await c.call_tool("TaskGet", {"taskId": 3, "plan": plan}))
                untouched = text_of(await c.call_tool("TaskGet", {"taskId": 4, "plan": plan}))
                result = await c.get_prompt("resume", {})
                return got, untouched, "\n".join(m.content.text for m in result.messages)  # type: ignore[union-attr]

    got, untouched, resume = anyio.run(run)
    lines = got.splitlines()
    heading = lines.index(HISTORY_HEADING)
    assert lines[heading - 1] == "POST /login"  # the whole task first, unchanged: its description last
    assert lines[heading + 1].endswith("#3 completed (by some-agent)")  # the stdio session's client did it
    assert lines[heading + 2].endswith("#3 claimed by alice (by -)")
    assert len(lines) == heading + 3  # its two changes, nothing more
    assert HISTORY_HEADING not in untouched  # never changed since the plan was made: no lines
    assert f"- completed (3): {plan} #3 '{SUBJECTS[2]}' by alice;" in resume
    assert f"- claimed (1): {plan} #3 '{SUBJECTS[2]}' by alice" in resume


def test_the_log_command_pages_newest_first(tmp_path: Path) -> None:
    root = tmp_path / "root"
    plan = _seeded(root)
    for k in range(4):
        Planner(FileStore(root)).create_task(plan, f"extra {k}", by="me")
    first = run_cli(["log", "add-auth", "--root", str(root), "--limit", "3"])
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert [x.split(" ", 2)[2] for x in lines[:3]] == [
        "#8 added (by me)",
        "#7 added (by me)",
        "#6 added (by me)",
    ]
    cursor = lines[3].split("--cursor ")[1].rstrip(")")
    second = run_cli(["log", plan, "--root", str(root), "--limit", "50", "--cursor", cursor, "--json"])
    events = json.loads(second.stdout)["events"]
    assert [e.get("task") for e in events] == [5, 3, 2, 1, None] and json.loads(second.stdout)["nextCursor"] is None
    every = run_cli(["log", "--root", str(root), "--limit", "2"])
    assert every.stdout.splitlines()[0].endswith(f"{plan} #8 added (by me)")
    bad = run_cli(["log", plan, "--root", str(root), "--cursor", "nonsense"])
    assert bad.returncode != 0 and "cursor 'nonsense' is not one this log gave" in bad.stderr


def test_session_start_says_what_happened_since_the_session_was_here(tmp_path: Path) -> None:
    root = tmp_path / "root"
    plan = _seeded(root)

    payload = json.dumps({"session_id": "s-1", "hook_event_name": "PostToolUse", "tool_name": "Bash"})
    done = run_cli_with_input(["hook", "--root", str(root)], payload)
    assert done.returncode == 0
    Planner(FileStore(root)).update_task(plan, 3, status="completed", by="other")
    start = json.dumps({"session_id": "s-1", "hook_event_name": "SessionStart", "source": "resume"})
    said = json.loads(run_cli_with_input(["hook", "--root", str(root)], start).stdout)
    context = said["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("# Active Plans")
    assert context.splitlines()[-2:] == [
        f"Since {context.split('Since ')[1][:17]}:",
        f"- completed (1): {plan} #3 '{SUBJECTS[2]}' by alice",
    ]


def run_cli_with_input(args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), *args], input=stdin, capture_output=True, text=True, timeout=bound(30), env=child_env()
    )
