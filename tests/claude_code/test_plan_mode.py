"""Plan mode end to end in Claude Code's interactive UI: the scripted model writes the
plan file the system prompt names and calls ExitPlanMode, the person approves it in the
real dialog, and the approved plan is a Session Plan the agent is told about."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from planning_core.stores.files import FileStore
from tests.support.claude_model import (
    Block,
    ClaudeHome,
    interactive,
    request_text,
    results_since_prompt,
    scripted_model,
    text,
    tool_use,
)

PLAN = (
    "# Add rate limiting\n\n## Steps\n1. Add a limiter module\n   - token bucket per IP\n"
    "2. Wire it into login\n3. Write tests\n"
)
PLAN_FILE = re.compile(r"(/[^\s\"'`]*?/plans/[^\s\"'`]+?\.md)")


def planner_model(body: dict[str, Any]) -> list[Block]:
    done = len(results_since_prompt(body))
    if done == 0:
        named = PLAN_FILE.search(request_text(body))
        return [tool_use("Write", {"file_path": named.group(1), "content": PLAN}, "toolu_plan_write")] if named else []
    if done == 1:
        return [tool_use("ExitPlanMode", {"plan": PLAN}, "toolu_plan_exit")]
    return [text("Plan approved; starting.")]


def test_an_approved_plan_mode_plan_is_a_session_plan(
    claude: str, home: ClaudeHome, root: Path, tmp_path: Path
) -> None:
    with (
        scripted_model(planner_model) as model,
        interactive(claude, home, model, tmp_path, ("--permission-mode", "plan")) as ui,
    ):
        ui.keys("-l", "Plan rate limiting for the API")
        ui.wait_for("Plan rate limiting for the API")
        ui.keys("Enter")
        ui.wait_for("Would you like to proceed?", timeout=90)  # Claude Code's own approval dialog
        ui.keys("Enter")  # the person approves
        ui.wait_for("Plan approved; starting.", timeout=90)
    assert model.errors == []
    store = FileStore(root)
    (name,) = store.active_plans()
    assert store.read_plan_md(name) == PLAN
    tasks = list(store.snapshot(name).tasks.values())
    assert [(t.subject, t.blocked_by) for t in tasks] == [
        ("Add a limiter module", []),
        ("Wire it into login", [1]),
        ("Write tests", [2]),
    ]
    assert tasks[0].description == "- token bucket per IP"
    told = request_text(model.requests[-1])
    assert f"Created plan {name} from the approved plan; it is now the current plan." in told
