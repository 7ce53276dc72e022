"""What the model receives in a real Claude Code session with planning-mcp and its hooks:
the scripted model does the seed's workflow through our tools (plan, claim, quiet rounds,
complete) and the test reads the request bodies Claude Code sent it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planning_core import PLAN_REMINDER
from tests.support.claude_model import (
    ClaudeHome,
    Steps,
    block_text,
    blocks_of,
    request_text,
    results_since_prompt,
    run_print,
    scripted_model,
    tool_names,
)

PLAN = "mcp__planning__PlanCreate"
UPDATE = "mcp__planning__TaskUpdate"
LIST = "mcp__planning__TaskList"
NATIVE_TASK_TOOLS = {"TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "TodoWrite"}
SUBJECTS = ["Design auth schema", "Implement JWT middleware", "Add login endpoint"]
QUIET = ("Bash", {"command": "true", "description": "Check the build"})
WORKFLOW: list[tuple[str, dict[str, Any]]] = [
    (
        PLAN,
        {
            "title": "Add auth",
            "analysis": "Users need to log in.",
            "approach": "JWT.",
            "tasks": [
                {"subject": SUBJECTS[0], "description": "tables"},
                {"subject": SUBJECTS[1], "description": "jwt", "blockedBy": [1]},
                {"subject": SUBJECTS[2], "description": "POST /login", "blockedBy": [1]},
            ],
        },
    ),
    (UPDATE, {"taskId": 1, "status": "in_progress"}),
    *[QUIET] * 4,
    (LIST, {}),  # the 5th quiet round since the claim: the reminder is due on it
    *[QUIET] * 4,  # rounds 6 to 9: none
    (UPDATE, {"taskId": 1, "status": "completed"}),
]


def result_of(body: dict[str, Any], index: int) -> str:
    return block_text(results_since_prompt(body)[index])


def scripted_results(body: dict[str, Any]) -> list[str]:
    """The tool results of the scripted steps (not Claude Code's wait for servers)."""
    return [block_text(r) for r in results_since_prompt(body) if str(r.get("tool_use_id")).startswith("toolu_work_")]


def test_the_model_sees_our_texts_reminders_and_plans(claude: str, home: ClaudeHome, tmp_path: Path) -> None:
    with scripted_model(Steps({"work": WORKFLOW})) as model:
        done = run_print(
            claude,
            home,
            model,
            "Add auth to the shop: work through it",
            args=("--debug-file", str(tmp_path / "debug.log")),
        )
    assert done.returncode == 0, done.stderr
    assert model.errors == []
    final = model.requests[-1]
    results = scripted_results(final)
    assert len(results) == len(WORKFLOW), results

    # The contract's texts, not the structured JSON: the created plan with its subjects ...
    created = results[0]
    assert created.startswith("Created plan ") and not created.startswith("{")
    for n, subject in enumerate(SUBJECTS, 1):
        assert f"#{n} [pending] {subject}" in created
    # ... and the unblocked tasks named.
    assert results[-1] == f"Updated task #1 status\nNow unblocked: #2 {SUBJECTS[1]}, #3 {SUBJECTS[2]}"

    # The reminder on the 5th quiet round, once: it first appears in the request that
    # follows the TaskList call, and is never said again (the server leaves it to the hook).
    by_rounds = {len(scripted_results(r)): request_text(r) for r in model.requests}
    assert PLAN_REMINDER not in by_rounds[6]
    assert by_rounds[7].count(PLAN_REMINDER) == 1
    assert request_text(final).count(PLAN_REMINDER) == 1

    # Before the user's turn, the Active Plans block as it was then (no plans yet), and no
    # connect-time block in the server's instructions that could go stale.
    first = request_text(model.requests[0])
    assert "# Active Plans\n(none)" in first
    # One task list: Claude Code's own task tools are not offered (the documented
    # permissions.deny), ours are, and Claude Code's nudge towards its own is gone.
    offered = tool_names(final)
    assert offered.isdisjoint(NATIVE_TASK_TOOLS), offered & NATIVE_TASK_TOOLS
    assert {PLAN, UPDATE, LIST} <= offered
    assert "The task tools haven't been used recently" not in request_text(final)

    said = [block_text(b) for m in final["messages"] for b in blocks_of(m)]
    instructions = [t.split("# MCP Server Instructions", 1)[1] for t in said if "# MCP Server Instructions" in t]
    instructions = [t.split("hook additional context:", 1)[0] for t in instructions]
    assert instructions and all("# Active Plans" not in t for t in instructions)
