"""Claude Code's plan mode, approved, becomes a Session Plan: the PostToolUse hook for
ExitPlanMode with the payload Claude Code 2.1.197 sends (tool_input {plan, planFilePath},
tool_response {plan, isAgent, filePath, planWasEdited})."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from planning_core import Planner
from planning_core.models import TaskStatus
from planning_core.stores.files import FileStore
from server.claude_code.claude_hook import main

SID = "7c1e2d3f-0a4b-4c5d-8e9f-112233445566"
PLAN = """# Add rate limiting to the API

## Context
Clients can hammer /login; we need per-IP limits.

## Steps

1. **Add a limiter module** in `api/limits.py`
   - token bucket per IP
   - configurable rate
2. Wire it into the login route
   ```python
   @limit("5/minute")
   def login(): ...
   ```
3. Write tests (parallel)
   - burst of 6 requests gets a 429
4. Document the setting (after 1, 2)

## Verification
- run `pytest tests/api`
"""
REVISED = PLAN.replace("3. Write tests (parallel)", "3. Add metrics\n4. Write tests (parallel)").replace(
    "4. Document the setting (after 1, 2)", ""
)


@pytest.fixture(autouse=True)
def _no_env_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANNING_MCP_ROOT", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    FileStore(folder / ".planning").ensure_writable()
    return folder


def approve(project: Path, text: str, plan_file: str = "/home/dev/.claude/plans/rate-limits.md") -> str:
    payload: dict[str, Any] = {
        "session_id": SID,
        "transcript_path": f"/home/dev/.claude/projects/-home-dev-shop/{SID}.jsonl",
        "cwd": str(project),
        "permission_mode": "plan",
        "hook_event_name": "PostToolUse",
        "tool_name": "ExitPlanMode",
        "tool_input": {"plan": text, "planFilePath": plan_file},
        "tool_response": {"plan": text, "isAgent": False, "filePath": plan_file, "planWasEdited": False},
        "tool_use_id": "toolu_01ExitPlanMode",
        "prompt_id": "p1",
        "duration_ms": 12,
    }
    out = io.StringIO()
    assert main("PostToolUse", None, io.StringIO(json.dumps(payload)), out) == 0
    printed = out.getvalue()
    return str(json.loads(printed)["hookSpecificOutput"]["additionalContext"]) if printed else ""


def only_plan(project: Path) -> tuple[FileStore, str]:
    store = FileStore(project / ".planning")
    (name,) = store.active_plans()
    return store, name


def test_an_approved_plan_becomes_a_session_plan(project: Path) -> None:
    said = approve(project, PLAN)
    store, name = only_plan(project)
    assert name.endswith("-add-rate-limiting-to-the-api")
    assert store.read_plan_md(name) == PLAN  # the approved text, as approved
    tasks = store.snapshot(name).tasks
    assert [t.subject for t in tasks.values()] == [
        "Add a limiter module in api/limits.py",
        "Wire it into the login route",
        "Write tests",
        "Document the setting",
    ]
    assert [t.blocked_by for t in tasks.values()] == [[], [1], [], [1, 2]]
    assert tasks[1].description == "- token bucket per IP\n- configurable rate"
    assert '@limit("5/minute")' in tasks[2].description  # a code block stays in its step
    assert all(t.status is TaskStatus.PENDING for t in tasks.values())
    assert said.startswith(
        f"Created plan {name} from the approved plan; it is now the current plan.\n{name} [0/4 done]"
    )
    assert "TaskUpdate" in said


def test_a_revision_approved_again_updates_the_same_plan(project: Path) -> None:
    approve(project, PLAN)
    store, name = only_plan(project)
    Planner(store).update_task(name, 1, status="completed")
    said = approve(project, REVISED)
    store, again = only_plan(project)  # no second copy
    assert again == name
    tasks = store.snapshot(name).tasks
    assert [(t.id, t.subject, t.status.value) for t in tasks.values()] == [
        (1, "Add a limiter module in api/limits.py", "completed"),  # done work kept
        (2, "Wire it into the login route", "pending"),
        (3, "Write tests", "pending"),
        (5, "Add metrics", "pending"),  # the new step, after the one before it
    ]
    assert tasks[5].blocked_by == [2]
    assert "1 tasks added, 1 pending tasks removed" in said


def test_a_plan_without_a_list_is_one_task(project: Path) -> None:
    text = "# Fix the typo in the footer\n\nChange 'Copyrigth' to 'Copyright' in footer.html.\n"
    approve(project, text)
    store, name = only_plan(project)
    (task,) = store.snapshot(name).tasks.values()
    assert task.subject == "Fix the typo in the footer"
    assert "Copyrigth" in task.description
    assert store.read_plan_md(name) == text


def test_checkbox_steps_and_an_empty_plan(project: Path) -> None:
    assert approve(project, "   ") == ""  # nothing approved: nothing made
    assert FileStore(project / ".planning").active_plans() == []
    approve(project, "## Cleanup\n- [ ] Remove dead code\n  - old views\n- [x] Bump version\n")
    store, name = only_plan(project)
    assert [(t.subject, t.blocked_by) for t in store.snapshot(name).tasks.values()] == [
        ("Remove dead code", []),
        ("Bump version", [1]),
    ]


def test_the_criteria_a_step_lists_become_its_tasks_acceptance(project: Path) -> None:
    """Checkbox items and `Acceptance:` lines under a step are its criteria (out of its
    description); one in a code block, or longer than a criterion may be, stays description."""
    text = (
        "# Login limits\n\n"
        "1. Add the limiter\n"
        "   - token bucket per IP\n"
        "   - [ ] returns 429 on the sixth request\n"
        "   - [x] check:tests\n"
        "   ```\n   - [ ] not a criterion\n   ```\n"
        "2. Document it\n"
        "   **Acceptance:** README names the setting\n"
        f"   - [ ] {'long ' * 50}\n"
    )
    approve(project, text)
    store, name = only_plan(project)
    first, second = store.snapshot(name).tasks.values()
    assert first.acceptance == ["returns 429 on the sixth request", "check:tests"]
    assert first.description == "- token bucket per IP\n```\n- [ ] not a criterion\n```"
    assert second.acceptance == ["README names the setting"]
    assert second.description == f"- [ ] {'long ' * 50}"
    approve(project, text.replace("2. Document it", "2. Add metrics\n   - [ ] a counter per IP\n3. Document it"))
    added = [t for t in store.snapshot(name).tasks.values() if t.subject == "Add metrics"]
    assert [t.acceptance for t in added] == [["a counter per IP"]]
