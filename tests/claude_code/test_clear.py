"""After /clear in Claude Code's interactive UI the model reads the Active Plans block as
it is now (SessionStart `clear` and UserPromptSubmit), and no stale one: the server's
instructions, fixed when Claude Code connected, carry none for this host."""

from __future__ import annotations

from pathlib import Path

from planning_core.stores.files import FileStore
from tests.support.claude_model import ClaudeHome, Steps, interactive, request_text, say, scripted_model

PLAN = (
    "mcp__planning__PlanCreate",
    {
        "title": "Add auth",
        "analysis": "Users need to log in.",
        "approach": "JWT.",
        "tasks": [
            {"subject": "Design auth schema", "description": "tables"},
            {"subject": "Add login endpoint", "description": "POST /login", "blockedBy": [1]},
        ],
    },
)
DONE = ("mcp__planning__TaskUpdate", {"taskId": 1, "status": "completed"})


def test_after_clear_the_model_reads_the_current_active_plans(
    claude: str, home: ClaudeHome, root: Path, tmp_path: Path
) -> None:
    with (
        scripted_model(Steps({"work": [PLAN, DONE], "next": []})) as model,
        interactive(claude, home, model, tmp_path) as ui,
    ):
        say(ui, "Add auth to the shop: work through it", then="Finished work.")
        say(ui, "/clear", gone="Finished work.")
        say(ui, "What is next?", then="Finished next.")
    assert model.errors == []
    after_clear = request_text(model.requests[-1])
    (plan,) = FileStore(root).active_plans()
    now = f"# Active Plans\n- {plan} [1/2 done]"
    assert f"SessionStart hook additional context: {now}" in after_clear
    assert f"UserPromptSubmit hook additional context: {now}" in after_clear
    assert "(none)" not in after_clear
    assert "Add auth to the shop" not in after_clear  # the conversation really was cleared
