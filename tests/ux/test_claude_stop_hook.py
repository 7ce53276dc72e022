"""`planning-mcp hook Stop` on files and on PostgreSQL (where the session's state lives in
the database): the session's own task in progress (the owner its claims named) or a ready
task blocks the stop; the blocks in a row are counted per session and reset by a fresh
stop; a time gate whose time has passed is completed first, so the work behind it counts.
The whole session in Claude Code's real CLI: tests/claude_code/test_stop.py."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planning_core import Planner
from planning_core.store import PlanStore
from server.claude_code.claude_hook import main
from tests.support.store_urls import SERVED_KINDS, opened_store, store_url


@pytest.fixture(params=SERVED_KINDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield store_url(request.param, tmp_path)


@pytest.fixture
def opened(url: str) -> Iterator[PlanStore]:
    yield from opened_store(url)


def hook(url: str, event: str, **payload: Any) -> dict[str, Any]:
    out = io.StringIO()
    raw = json.dumps({"session_id": "s-1", "hook_event_name": event, **payload})
    assert main(event, None, io.StringIO(raw), out, store_arg=url) == 0
    return json.loads(out.getvalue()) if out.getvalue() else {}


def test_the_sessions_own_task_blocks_the_stop_and_the_bound_counts_in_a_row(url: str, opened: PlanStore) -> None:
    tasks = [{"subject": "Draft the schema"}, {"subject": "Migrate", "blockedBy": [1]}]
    name = Planner(opened).create_plan("Schema", analysis="a", approach="b", tasks=tasks).name
    Planner(opened).update_task(name, 1, status="in_progress", owner="worker-7")
    assert "systemMessage" in hook(url, "Stop", stop_hook_active=False)  # another agent's, as far as it knows
    claim = {"owner": "worker-7", "taskId": 1, "status": "in_progress"}
    hook(url, "PostToolUse", tool_name="mcp__planning__TaskUpdate", tool_input=claim, tool_response={})
    answers = [hook(url, "Stop", stop_hook_active=active) for active in (False, True, True, True)]
    assert [a.get("decision") for a in answers] == ["block", "block", "block", None]
    assert "#1 Draft the schema is in progress (worker-7). Finish it" in answers[0]["reason"]
    assert "blocked 3 times in a row" in answers[3]["systemMessage"]
    assert hook(url, "Stop", stop_hook_active=False).get("decision") == "block"  # a fresh stop: a new row


def test_a_passed_time_gate_completes_at_the_stop_and_the_work_behind_it_blocks(url: str, opened: PlanStore) -> None:
    tasks = [
        {"subject": "Wait for the freeze", "gate": {"after": "2020-01-01T00:00:00Z"}},
        {"subject": "Deploy", "blockedBy": [1]},
    ]
    name = Planner(opened).create_plan("Deploy", analysis="a", approach="b", tasks=tasks).name
    answer = hook(url, "Stop", stop_hook_active=False)
    assert "#2 Deploy is ready and nobody holds it" in answer["reason"]
    assert opened.get_task(name, 1).status.value == "completed"


def test_a_person_gate_lets_the_stop_happen_saying_who_it_waits_for(url: str, opened: PlanStore) -> None:
    name = (
        Planner(opened)
        .create_plan("Schema", analysis="a", approach="b", tasks=[{"subject": "Approve it", "gate": "human"}])
        .name
    )
    answer = hook(url, "Stop", stop_hook_active=False)
    assert answer == {
        "systemMessage": f"planning-mcp: Plan {name} is not done (1 of 1 tasks left): "
        f"waiting for a person: #1 Approve it (planning-mcp approve {name} 1)."
    }


def test_a_task_the_session_completes_starts_the_count_again(url: str, opened: PlanStore) -> None:
    tasks = [{"subject": "One"}, {"subject": "Two"}]
    Planner(opened).create_plan("Two", analysis="a", approach="b", tasks=tasks)
    assert [hook(url, "Stop", stop_hook_active=a).get("decision") for a in (False, True, True)] == ["block"] * 3
    done = {"taskId": 1, "status": "completed"}
    hook(url, "PostToolUse", tool_name="mcp__planning__TaskUpdate", tool_input=done, tool_response={})
    assert hook(url, "Stop", stop_hook_active=True).get("decision") == "block"  # progress: a new row
