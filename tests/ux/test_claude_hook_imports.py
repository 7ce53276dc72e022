"""Claude Code waits on `planning-mcp hook` at every prompt and tool call: the hook loads
no MCP SDK, no rich and no server, and a round (PostToolUse, the most frequent call), the
Active Plans line before each prompt (UserPromptSubmit), a round with a reminder due, a stop in a project without
plans, a stop with nothing left to judge and one with work left in plain task files load
no models either (no pydantic). Checked
in a fresh interpreter the way the console script runs it (server.entry.main), with this
checkout's code, listing what ended up in sys.modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planning_core import Planner
from planning_core.reminders import PLAN_REMINDER
from planning_core.stores.files import FileStore
from tests.support.waits import bound

NEVER = {"mcp", "rich", "anyio", "starlette", "uvicorn", "psycopg", "anyascii", "server.mcp.app", "server.cli"}
MODELS = {"pydantic", "pydantic_core", "planning_core.models"}
REPO = Path(__file__).resolve().parents[2]
PROBE = """
import io, json, sys
repo, event, payload, out = sys.argv[1:]
sys.path.insert(0, repo)
sys.stdin = io.StringIO(payload)
from server.entry import main
code = main(["hook", event])
with open(out, "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""


def _loaded(
    project: Path, event: str, payload: dict[str, object], tmp_path: Path, env: dict[str, str] | None = None
) -> tuple[set[str], str]:
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-I", "-c", PROBE, str(REPO), event, json.dumps({"cwd": str(project), **payload}), str(out)],
        capture_output=True,
        text=True,
        timeout=bound(30),
        cwd=project,
        env={**{k: v for k, v in os.environ.items() if not k.startswith(("PLANNING_MCP_", "CLAUDE_"))}, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(out.read_text())
    assert found["code"] == 0
    assert done.stderr == ""  # the hook fails open, saying why on stderr
    return set(found["modules"]), done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    store = FileStore(folder / ".planning")
    store.ensure_writable()
    planner = Planner(store)
    name = planner.create_plan(
        "Ship", analysis="a", approach="b", date="2026-01-01", tasks=[{"subject": "One"}, {"subject": "Two"}]
    ).name
    planner.update_task(name, 1, status="in_progress")
    store.close()
    return folder


@pytest.mark.parametrize(
    "tool",
    ["Bash", "mcp__planning__TaskUpdate"],
)
def test_a_round_loads_no_sdk_no_rich_no_models(project: Path, tmp_path: Path, tool: str) -> None:
    payload = {"session_id": "s1", "tool_name": tool, "tool_input": {"taskId": 2, "plan": "ship"}}
    modules, printed = _loaded(project, "PostToolUse", payload, tmp_path)
    assert printed == ""  # the first round: no reminder due
    assert not {m.split(".")[0] for m in modules} & NEVER
    assert not modules & (NEVER | MODELS)
    assert (project / ".planning" / ".hooks" / "s1.json").is_file()  # the round was counted


def test_a_round_with_a_reminder_due_loads_no_models(project: Path, tmp_path: Path) -> None:
    """The fifth quiet round while a task is in progress: the reminder, its "is work in
    progress?" read from the task files plainly."""
    payload = {"session_id": "s1", "tool_name": "Bash", "tool_input": {}}
    for _ in range(4):
        assert _loaded(project, "PostToolUse", payload, tmp_path)[1] == ""
    modules, printed = _loaded(project, "PostToolUse", payload, tmp_path)
    assert PLAN_REMINDER in json.loads(printed)["hookSpecificOutput"]["additionalContext"]
    assert not modules & (NEVER | MODELS)


def test_the_line_before_each_prompt_loads_no_sdk_no_rich_no_models(project: Path, tmp_path: Path) -> None:
    modules, printed = _loaded(project, "UserPromptSubmit", {"session_id": "s1", "prompt": "go"}, tmp_path)
    assert json.loads(printed)["hookSpecificOutput"]["additionalContext"] == (
        '# Active Plans\n- 2026-01-01-ship [0/2 done] current: "One"'
    )
    assert not {m.split(".")[0] for m in modules} & NEVER
    assert not modules & (NEVER | MODELS)


def test_the_session_start_block_and_history_load_no_sdk_no_rich_no_models(project: Path, tmp_path: Path) -> None:
    """A new session, then the same session resumed: the block and "since you were last
    here" are read from the task files and the history logs plainly."""
    modules, printed = _loaded(project, "SessionStart", {"session_id": "s1", "source": "startup"}, tmp_path)
    context = json.loads(printed)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith('# Active Plans\n- 2026-01-01-ship [0/2 done] current: "One"\n\nSince ')
    assert "- claimed (1): 2026-01-01-ship #1 'One' by " in context  # the day's history
    assert not {m.split(".")[0] for m in modules} & NEVER
    assert not modules & (NEVER | MODELS)
    _loaded(project, "PostToolUse", {"session_id": "s1", "tool_name": "Bash", "tool_input": {}}, tmp_path)
    store = FileStore(project / ".planning")  # the session was here (its first round), then ann works
    Planner(store).update_task("2026-01-01-ship", 1, status="completed", owner="ann")
    store.close()
    modules, printed = _loaded(project, "SessionStart", {"session_id": "s1", "source": "resume"}, tmp_path)
    context = json.loads(printed)["hookSpecificOutput"]["additionalContext"]
    assert "- completed (1): 2026-01-01-ship #1 'One' by ann" in context
    assert "claimed" not in context  # only what happened since the session was last here
    assert not modules & (NEVER | MODELS)


@pytest.mark.parametrize("event", ["Stop", "UserPromptSubmit", "SessionStart", "PostToolUse"])
def test_a_project_without_plans_loads_no_models(tmp_path: Path, event: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    payload = {"session_id": "s1", "tool_name": "Bash", "source": "startup"}
    modules, printed = _loaded(elsewhere, event, payload, tmp_path)
    assert printed == ""
    assert not modules & (NEVER | MODELS)


def test_a_stop_with_the_stop_hook_off_loads_no_models(project: Path, tmp_path: Path) -> None:
    modules, printed = _loaded(project, "Stop", {"session_id": "s1"}, tmp_path, {"PLANNING_MCP_STOP_BLOCKS": "0"})
    assert printed == ""
    assert not modules & (NEVER | MODELS)
    modules, printed = _loaded(project, "Stop", {"session_id": "s1"}, tmp_path)  # on: task #1 is in progress
    assert json.loads(printed)["decision"] == "block"
    assert not modules & (NEVER | MODELS)  # judged from the task files read plainly (done.work_left)


def test_a_stop_on_a_gated_plan_is_judged_by_the_store(project: Path, tmp_path: Path) -> None:
    """A passed time gate is completed (a write) before the judgement: the store does it."""
    store = FileStore(project / ".planning")
    Planner(store).update_task("2026-01-01-ship", 2, gate={"after": "2020-01-01T00:00:00Z"})
    store.close()
    modules, printed = _loaded(project, "Stop", {"session_id": "s1"}, tmp_path)
    assert json.loads(printed)["decision"] == "block"
    assert modules & MODELS


def test_a_stop_with_nothing_left_to_judge_loads_no_models(project: Path, tmp_path: Path) -> None:
    """Every task completed, or no plan this session's stop is judged on (two active plans,
    no current one): the stop happens, the blocks in a row start again, and nothing but the
    plain read is loaded. Work left still blocks."""
    store = FileStore(project / ".planning")
    planner = Planner(store)
    for task_id in (1, 2):
        planner.update_task("2026-01-01-ship", task_id, status="completed")
    hooks = project / ".planning" / ".hooks"
    hooks.mkdir()
    (hooks / "s1.json").write_text(json.dumps({"session_id": "s1", "stop_blocks": 2}))
    modules, printed = _loaded(project, "Stop", {"session_id": "s1", "stop_hook_active": True}, tmp_path)
    assert printed == ""
    assert not modules & (NEVER | MODELS)
    assert json.loads((hooks / "s1.json").read_text())["stop_blocks"] == 0
    planner.create_plan("Other", analysis="a", approach="b", date="2026-01-02", tasks=[{"subject": "Three"}])
    store.close()
    modules, printed = _loaded(project, "Stop", {"session_id": "s2"}, tmp_path)
    assert printed == ""
    assert not modules & (NEVER | MODELS)
    (hooks / "s3.json").write_text(json.dumps({"session_id": "s3", "current_plan": "2026-01-02-other"}))
    modules, printed = _loaded(project, "Stop", {"session_id": "s3"}, tmp_path)
    assert json.loads(printed)["decision"] == "block"
