"""The Stop hook in Claude Code's real CLI (both pinned releases), with the documented
settings and a scripted model that tries to end its turn at once: while the plan has a
ready task the stop is blocked and the model's next request carries the hook's reason,
naming the task and the next step; after 3 blocks in a row, or when all that is left
waits for a person or is held by another agent, the session stops."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from planning_core import Planner
from planning_core.stores.files import FileStore
from tests.support.claude_model import (
    WAIT_FOR_SERVERS,
    Block,
    ClaudeHome,
    block_text,
    request_text,
    run_print,
    scripted_model,
    text,
    tool_names,
    tool_results,
    tool_use,
)

# The releases the tests pin: the one the sessions are driven on and the newest.
RELEASES = {"2.1.197": "PLANNING_MCP_CLAUDE_SESSION_BIN", "2.1.332": "PLANNING_MCP_CLAUDE_BIN"}
STOP_LINE = "I am done for now."
UPDATE = "mcp__planning__TaskUpdate"


@pytest.fixture(params=list(RELEASES))
def release(request: pytest.FixtureRequest, claude: str) -> str:
    binary = os.environ.get(RELEASES[request.param], "")
    if not Path(binary).is_file():
        pytest.fail(f"Claude Code {request.param} is not installed (set {RELEASES[request.param]})")
    return binary


def stopper(body: dict[str, Any]) -> list[Block]:
    """A model that ends its turn with text every time, whatever it is told."""
    return [text(STOP_LINE)]


def _plan(root: Path, gate_first: bool = False) -> str:
    tasks: list[dict[str, Any]] = [
        {"subject": "Draft the schema", **({"gate": "human"} if gate_first else {})},
        {"subject": "Migrate", "blockedBy": [1]},
    ]
    return Planner(FileStore(root)).create_plan("Schema", analysis="a", approach="b", tasks=tasks).name


def test_a_stop_with_a_ready_task_is_blocked_three_times_then_allowed(
    release: str, home: ClaudeHome, root: Path
) -> None:
    _plan(root)
    with scripted_model(stopper) as model:
        done = run_print(release, home, model, "Work on the schema plan")
    assert done.returncode == 0, done.stderr
    assert model.errors == []
    assert len(model.requests) == 4  # the first stop, then one request after each of 3 blocks
    told = request_text(model.requests[1])
    assert "#1 Draft the schema is ready and nobody holds it" in told
    assert 'Next: TaskUpdate taskId "next"' in told
    assert "#1 Draft the schema" not in request_text(model.requests[0])
    assert done.stdout.strip() == STOP_LINE


@pytest.mark.parametrize("left", ["gated", "others"])
def test_a_stop_is_allowed_when_what_is_left_waits_for_a_person_or_another_agent(
    release: str, home: ClaudeHome, root: Path, left: str
) -> None:
    name = _plan(root, gate_first=left == "gated")
    if left == "others":
        Planner(FileStore(root)).update_task(name, 1, status="in_progress", owner="another-agent")
    with scripted_model(stopper) as model:
        done = run_print(release, home, model, "Work on the schema plan")
    assert done.returncode == 0, done.stderr
    assert len(model.requests) == 1


def test_the_bound_is_a_setting_and_zero_turns_the_hook_off(release: str, home: ClaudeHome, root: Path) -> None:
    _plan(root)
    for setting, requests in (("1", 2), ("0", 1)):
        with scripted_model(stopper) as model:
            run_print(release, home, model, "Work on the schema plan", env={"PLANNING_MCP_STOP_BLOCKS": setting})
        assert len(model.requests) == requests, setting


class Finisher:
    """A model that ends its turn whenever it may; asked again (only a blocked stop asks it
    again), it claims the next task and completes it, then tries to stop again."""

    def __init__(self) -> None:
        self.calls = 0
        self.state = "start"

    def _call(self, name: str, arguments: dict[str, Any]) -> list[Block]:
        self.calls += 1
        return [tool_use(name, arguments, f"toolu_finish_{self.calls}")]

    def _answer(self, body: dict[str, Any]) -> str:
        """The result of its latest call."""
        ident = f"toolu_finish_{self.calls}"
        return next(block_text(r) for r in tool_results(body) if r.get("tool_use_id") == ident)

    def __call__(self, body: dict[str, Any]) -> list[Block]:
        if self.state == "claiming":
            claimed = re.search(r"Claimed: #(\d+)", self._answer(body))
            if claimed:
                self.state = "completing"
                return self._call(UPDATE, {"taskId": int(claimed.group(1)), "status": "completed"})
        if self.state == "stopped":
            if UPDATE not in tool_names(body):  # the server is still connecting
                return self._call(WAIT_FOR_SERVERS, {})
            self.state = "claiming"
            return self._call(UPDATE, {"taskId": "next", "status": "in_progress", "owner": "claude"})
        self.state = "stopped"
        return [text(STOP_LINE)]


def test_told_by_the_stop_hook_the_model_works_until_the_plan_is_done(
    release: str, home: ClaudeHome, root: Path
) -> None:
    """Five tasks, more than the bound of 3 blocks in a row: each completed task starts the
    count again."""
    tasks = [{"subject": f"Step {i}", "blockedBy": [i - 1] if i > 1 else []} for i in range(1, 6)]
    name = Planner(FileStore(root)).create_plan("Steps", analysis="a", approach="b", tasks=tasks).name
    model_script = Finisher()
    with scripted_model(model_script) as model:
        done = run_print(release, home, model, "Work on the schema plan")
    assert done.returncode == 0, done.stderr
    assert model.errors == []
    tasks = FileStore(root).snapshot(name).tasks
    assert {t.status.value for t in tasks.values()} == {"completed"}
    assert {t.owner for t in tasks.values()} == {"claude"}
    told = [request_text(r) for r in model.requests]
    assert any("#5 Step 5 is ready and nobody holds it" in t for t in told)  # after #4, the hook said what next
    assert model_script.state == "stopped"  # and its last stop, with the plan done, was let through
