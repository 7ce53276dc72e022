"""`planning-mcp hook <event>` with recorded Claude Code payloads (fixtures/)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from planning_core import PLAN_REMINDER, Planner
from planning_core.actions import Actions
from planning_core.stores.files import FileStore
from server.claude_code.claude_hook import main
from server.claude_code.hook_common import hook_root, session_file
from server.mcp.resources import active_text
from server.mcp.state import AppState
from tests.support.seed import FORK, PLAN_NAME, seed_root
from tests.support.waits import bound

from .conftest import fixture

SID = "4f6d2c1e-8a3b-4b7e-9c51-0e2f7a9d3b64"


@pytest.fixture(autouse=True)
def _no_env_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANNING_MCP_ROOT", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)


def call(payload: Any, event: str | None = None, root: str | None = None) -> tuple[int, str]:
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    out = io.StringIO()
    rc = main(event, root, io.StringIO(raw), out)
    return rc, out.getvalue()


def context(printed: str) -> str:
    data = json.loads(printed)
    return str(data["hookSpecificOutput"]["additionalContext"])


@pytest.mark.parametrize("source", ["session_start_startup.json", "session_start_compact.json"])
def test_session_start_gives_the_active_plans_block(project: Path, seeded: str, source: str) -> None:
    rc, printed = call(fixture(source, cwd=str(project)), "SessionStart")
    assert rc == 0
    data = json.loads(printed)
    assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    block, since = context(printed).split("\n\n")
    assert block == f'# Active Plans\n- {PLAN_NAME} [2/4 done] current: "Add login endpoint"'
    # A new session: what happened in the last day (the seed's own changes), after the block.
    assert since.splitlines()[0].startswith("Since ") and len(since.splitlines()) == 3
    assert since.splitlines()[2] == f"- claimed (1): {PLAN_NAME} #3 'Add login endpoint' by alice"


def test_session_start_event_from_the_payload_and_from_a_subfolder(project: Path, seeded: str) -> None:
    sub = project / "api" / "v1"
    sub.mkdir(parents=True)
    rc, printed = call(fixture("session_start_compact.json", cwd=str(sub)))  # no event argument
    assert rc == 0 and PLAN_NAME in context(printed)


def test_session_start_with_no_plans_yet(project: Path, root: Path) -> None:
    FileStore(root).ensure_writable()
    _, printed = call(fixture("session_start_startup.json", cwd=str(project)), "SessionStart")
    assert context(printed) == "# Active Plans\n(none)"


def test_no_planning_folder_prints_nothing_and_creates_nothing(project: Path) -> None:
    rc, printed = call(fixture("session_start_startup.json", cwd=str(project)), "SessionStart")
    assert (rc, printed) == (0, "")
    rc, printed = call(fixture("post_tool_use_bash.json", cwd=str(project)), "PostToolUse")
    assert (rc, printed) == (0, "")
    assert not (project / ".planning").exists()


@pytest.mark.parametrize(
    "raw", ["", "not json", "[1, 2]", '{"cwd": 7}', '{"session_id": null, "tool_name": 3}', "\x00\xff"]
)
def test_broken_payloads_fail_open(project: Path, seeded: str, raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    for event in ("SessionStart", "PostToolUse", "Nonsense", None):
        rc, printed = call(raw, event)
        assert rc == 0
        if event != "SessionStart":
            assert printed == ""


def post(project: Path, name: str = "post_tool_use_bash.json", **kw: Any) -> str:
    rc, printed = call(fixture(name, cwd=str(project), **kw), "PostToolUse")
    assert rc == 0
    return printed


def test_reminder_after_five_quiet_rounds_while_a_task_is_in_progress(project: Path, seeded: str) -> None:
    assert post(project, "post_tool_use_task_update.json") == ""  # round 0: a plan change
    quiet = [post(project, n) for n in ["post_tool_use_bash.json", "post_tool_use_edit.json"] * 2]
    assert quiet == ["", "", "", ""]
    printed = post(project, "post_tool_use_task_list.json")  # 5th quiet round: our own read-only tool counts
    assert json.loads(printed) == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": PLAN_REMINDER}
    }
    assert [post(project) for _ in range(4)] == ["", "", "", ""]
    assert context(post(project)) == PLAN_REMINDER  # again after 5 more


def test_a_plan_change_resets_the_count_and_a_refusal_does_not(project: Path, seeded: str) -> None:
    for _ in range(3):
        post(project)
    assert post(project, "post_tool_use_plan_create.json") == ""  # another server name, still a change
    for _ in range(3):
        post(project)
    assert post(project, "post_tool_use_task_update_refused.json") == ""  # round 4: refused, not a change
    assert context(post(project)) == PLAN_REMINDER


def test_no_reminder_without_work_in_progress(project: Path, root: Path) -> None:
    seed_root(root, FORK, in_progress=False)
    assert [post(project) for _ in range(12)] == [""] * 12


def test_current_plan_of_the_session_decides(project: Path, seeded: str, root: Path) -> None:
    """After PlanCreate the session works on the new plan: an in-progress task in
    another plan does not make it due (as in the server's own policy)."""
    Planner(FileStore(root)).create_plan(
        "Add billing", analysis="a", approach="b", date="2026-05-29", tasks=[{"subject": "x"}]
    )
    post(project, "post_tool_use_plan_create.json")
    assert [post(project) for _ in range(5)] == [""] * 5
    state = json.loads(session_file(root, SID).read_text())
    assert state["current_plan"] == "2026-05-29-add-billing" and state["plan_quiet"] == 5


def test_counts_are_per_session_and_files_are_safe(project: Path, seeded: str, root: Path) -> None:
    for _ in range(4):
        post(project)
    evil = "../../etc/passwd\n"
    for _ in range(4):
        post(project, session_id=evil)
    assert context(post(project)) == PLAN_REMINDER  # session 1: 5th
    assert post(project, session_id="other") == ""
    files = sorted(p.name for p in (root / ".hooks").iterdir())
    assert all("/" not in f and ".." not in f.replace(".json", "").replace(".lock", "") for f in files)
    assert session_file(root, evil).parent == root / ".hooks"
    assert not [f for f in files if f.endswith(".tmp")]
    state = json.loads(session_file(root, SID).read_text())
    assert state["session_id"] == SID and state["plan_quiet"] == 5


def test_corrupt_state_file_starts_the_count_again(project: Path, seeded: str, root: Path) -> None:
    post(project)
    session_file(root, SID).write_text("{torn")
    assert post(project) == ""
    assert json.loads(session_file(root, SID).read_text())["plan_quiet"] == 1


def test_root_resolution(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    payload = {"cwd": str(project / "deep")}
    assert hook_root("/x/r", payload) == Path("/x/r")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path / "proj"))
    assert hook_root(None, payload) == tmp_path / "proj" / ".planning"
    (project / ".planning").mkdir()
    assert hook_root(None, payload) == project / ".planning"  # nearest .planning above cwd
    monkeypatch.setenv("PLANNING_MCP_ROOT", str(tmp_path / "env"))
    assert hook_root(None, payload) == tmp_path / "env"


def test_the_console_script_stays_light_and_exits_0(project: Path, seeded: str) -> None:
    """A hook runs on every event of Claude Code, so it must start quickly: it never imports
    the MCP SDK (what makes a server's start slow). Checked by what it imports, not by a clock
    (a clock only measures how busy the machine is)."""
    exe = Path(sys.executable).parent / "planning-mcp"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "server"]
    payload = json.dumps(fixture("session_start_compact.json", cwd=str(project)))
    r = subprocess.run([*cmd, "hook", "SessionStart"], input=payload, capture_output=True, text=True, timeout=bound(60))
    assert r.returncode == 0, r.stderr
    assert PLAN_NAME in context(r.stdout)
    r = subprocess.run([*cmd, "hook", "PostToolUse"], input="{oops", capture_output=True, text=True, timeout=bound(60))
    assert (r.returncode, r.stdout) == (0, "")
    traced = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "server", "hook", "SessionStart"],
        input=payload,
        capture_output=True,
        text=True,
        timeout=bound(60),
    )
    assert traced.returncode == 0, traced.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in traced.stderr.splitlines() if line.startswith("import time:")
    }
    assert "planning_core" in imported  # the trace is there at all
    assert not {m for m in imported if m == "mcp" or m.startswith("mcp.")}, "the hook imported the MCP SDK"


def test_with_a_database_store_the_count_lives_in_the_database(project: Path) -> None:
    """`hook --store postgresql://…`: the plans and the session's count are the database's,
    so the reminder comes on the 5th quiet round whichever machine's hook counts it."""
    from planning_core.stores import open_store
    from tests.support.pg import fresh_database_url
    from tests.support.seed import seed_plan

    url = fresh_database_url()
    store = open_store(url)
    store.prepare()
    try:
        seed_plan(Planner(store))
    finally:
        store.close()

    def post_db(name: str = "post_tool_use_bash.json") -> str:
        out = io.StringIO()
        raw = json.dumps(fixture(name, cwd=str(project)))
        assert main("PostToolUse", None, io.StringIO(raw), out, store_arg=url) == 0
        return out.getvalue()

    assert post_db("post_tool_use_task_update.json") == ""  # round 0: a plan change
    assert [post_db() for _ in range(4)] == ["", "", "", ""]
    assert context(post_db()) == PLAN_REMINDER
    start = io.StringIO()
    raw = json.dumps(fixture("session_start_startup.json", cwd=str(project)))
    assert main("SessionStart", None, io.StringIO(raw), start, store_arg=url) == 0
    assert context(start.getvalue()) == f'# Active Plans\n- {PLAN_NAME} [2/4 done] current: "Add login endpoint"'
    assert not (project / ".planning").exists()  # nothing on disk: the database holds it all


@pytest.mark.parametrize("answer", ["post_tool_use_plan_create.json", "post_tool_use_plan_create_structured.json"])
def test_the_created_plan_becomes_current_in_both_answer_shapes(
    project: Path, seeded: str, root: Path, answer: str
) -> None:
    """Claude Code hands the hook an MCP answer as its content blocks (text only) or, when
    the answer has structured content, as that content's JSON in a string."""
    Planner(FileStore(root)).create_plan(
        "Add billing", analysis="a", approach="b", date="2026-05-29", tasks=[{"subject": "x"}]
    )
    post(project, answer)
    state = json.loads(session_file(root, SID).read_text())
    assert state["current_plan"] == "2026-05-29-add-billing"


def prompt_context(project: Path) -> str:
    rc, printed = call(fixture("user_prompt_submit.json", cwd=str(project)), "UserPromptSubmit")
    assert rc == 0
    assert json.loads(printed)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    return context(printed)


def test_user_prompt_submit_gives_the_current_active_plans_line(project: Path, seeded: str, root: Path) -> None:
    assert prompt_context(project) == f'# Active Plans\n- {PLAN_NAME} [2/4 done] current: "Add login endpoint"'
    planner = Planner(FileStore(root))
    planner.update_task(PLAN_NAME, 3, status="completed")
    assert prompt_context(project) == f"# Active Plans\n- {PLAN_NAME} [3/4 done]"  # as it is now, each turn


def test_user_prompt_submit_stays_within_60_tokens_with_the_current_plan_first(
    project: Path, seeded: str, root: Path
) -> None:
    planner = Planner(FileStore(root))
    for n in range(12):
        planner.create_plan(
            f"Side project {n}", analysis="a", approach="b", date="2026-05-30", tasks=[{"subject": "x"}]
        )
    latest = "2026-05-30-side-project-11"
    post(project, "post_tool_use_task_update.json", tool_input={"taskId": 1, "status": "in_progress", "plan": latest})
    shown = prompt_context(project)
    assert len(shown) <= 240  # about 60 tokens
    lines = shown.split("\n")
    assert lines[0] == "# Active Plans" and lines[1].startswith(f"- {latest} [0/1 done]")
    assert lines[-1].startswith("(+") and lines[-1].endswith(" more: PlanList)")
    assert int(lines[-1][2:].split()[0]) == 13 - (len(lines) - 2)


def test_user_prompt_submit_with_no_planning_folder_prints_nothing(project: Path) -> None:
    rc, printed = call(fixture("user_prompt_submit.json", cwd=str(project)), "UserPromptSubmit")
    assert (rc, printed) == (0, "")


def test_a_refused_call_is_a_round_that_changes_nothing(project: Path, seeded: str) -> None:
    """Claude Code fires PostToolUseFailure, not PostToolUse, for a refused MCP call."""
    assert post(project, "post_tool_use_task_update.json") == ""  # round 0
    for _ in range(4):
        assert post(project) == ""
    rc, printed = call(fixture("post_tool_use_failure_task_update.json", cwd=str(project)), "PostToolUseFailure")
    assert rc == 0
    assert json.loads(printed) == {
        "hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": PLAN_REMINDER}
    }


NOBODY = 65534  # root lists any folder, so as root the hook runs as this user


def _as_unprivileged(job: Callable[[], object]) -> Any:
    """job()'s JSON-able answer, run in a forked child that drops to `nobody` first when we
    are root (chmod cannot hide a folder from root)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(read_end)
            if os.geteuid() == 0:
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            with os.fdopen(write_end, "w") as out:
                json.dump(job(), out)
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end) as answer:
        text = answer.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the job failed as an unprivileged user (see stderr)"
    return json.loads(text)


def test_the_active_plans_block_lists_an_unreadable_plan_as_the_server_does(tmp_path: Path) -> None:
    """A plan folder that cannot be read is a line of its own in the hook's SessionStart
    block, as in the server's (plans://active and the instructions: resources.active_text,
    the planner's summaries): the agent sees it is there to mend."""
    base = Path(tempfile.mkdtemp(prefix="planning-hook-", dir="/tmp"))  # one `nobody` may enter
    base.chmod(0o755)
    project = base / "shop"
    name = seed_root(project / ".planning", FORK)
    bad = project / ".planning" / "todo" / "2026-05-29-bad"
    bad.mkdir(mode=0)
    store = FileStore(project / ".planning")
    planner = Planner(store)
    state = AppState(store=store, actions=Actions(planner))

    def both() -> list[str]:
        _, printed = call(fixture("session_start_startup.json", cwd=str(project)), "SessionStart")
        return [context(printed), active_text(state)]

    try:
        hook, served = _as_unprivileged(both)
    finally:
        bad.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
    lines = hook.split("\n\n")[0].split("\n")  # the block (the day's changes follow it)
    assert lines[:2] == ["# Active Plans", f'- {name} [2/4 done] current: "Add login endpoint"']
    assert len(lines) == 3 and lines[2].startswith("- 2026-05-29-bad ")
    assert hook.split("\n\n")[0] == served


def test_the_hook_takes_the_store_as_every_command_does(
    project: Path, seeded: str, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--store and $PLANNING_MCP_STORE as `status` reads them (store_choice.resolve): a
    `file:` URL names the folder, from any working folder."""
    payload = fixture("session_start_startup.json", cwd=str(tmp_path))
    out = io.StringIO()
    main("SessionStart", None, io.StringIO(json.dumps(payload)), out, store_arg=f"file:{root}")
    assert PLAN_NAME in context(out.getvalue())
    monkeypatch.setenv("PLANNING_MCP_STORE", f"file:{root}")
    assert PLAN_NAME in context(call(payload, "SessionStart")[1])
