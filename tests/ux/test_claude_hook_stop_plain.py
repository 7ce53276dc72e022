"""A stop with work left is judged from the task files read without the models when every
document is one the plain read takes (taskjson.light_task), by the same rules as the
store's (done.work_left): the hook's answer and the session state it keeps must be the
store's, whatever the plan holds. Each case makes a real plan (the core's writes, then hand
edits and hostile files), runs the hook as Claude Code does (a new process, the payload on
stdin, its imports timed to see whether the models were loaded) and asks the store the same
question with the same session state."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from planning_core import Planner
from planning_core.stores.files import FileStore
from server.claude_code import hook_state
from server.claude_code.claude_hook import handle
from server.claude_code.stop import stop
from tests.ux.test_claude_hook_plain_read import FOR_THE_MODELS, READ_ALIKE, Damage, _document, run_hook

REPO = Path(__file__).resolve().parents[2]
PLAN = "2026-05-01-ship-it"
SESSION = "s1"
LATER = "2999-01-01T00:00:00Z"
PYDANTIC = re.compile(r"\|\s+pydantic$", re.MULTILINE)  # a line of -X importtime's table
Setup = Callable[[Planner, Path], None]


def _update(task_id: int, **fields: object) -> Setup:
    return lambda planner, _: planner.update_task(PLAN, task_id, **fields)  # type: ignore[arg-type]


def _edit(task_id: int, **fields: object) -> Setup:
    """task_<id>.json edited by hand: these fields set (None: removed)."""
    return _hurt(_document(task_id, **fields))


def _hurt(damage: Damage) -> Setup:
    return lambda _, plan: damage(plan)


def _owner(name: str) -> Setup:
    """The session's claims named `name` (a TaskUpdate of ours, seen by the hook)."""

    def claimed(_: Planner, plan: Path) -> None:
        tool_input = {"plan": PLAN, "taskId": 1, "owner": name}
        payload = {"session_id": SESSION, "tool_name": "mcp__planning__TaskUpdate", "tool_input": tool_input}
        handle("PostToolUse", str(plan.parents[1]), json.dumps(payload))

    return claimed


FIVE = [{"subject": f'Step "{i}"'} for i in range(1, 6)]
# name: (the plan's tasks as PlanCreate takes them, what is done to it after)
JUDGED_PLAINLY: dict[str, tuple[list[dict[str, object]], list[Setup]]] = {
    "a ready task nobody holds": (FIVE, [_update(1, status="completed")]),
    "priorities decide": ([{"subject": "a", "priority": 3}, {"subject": "b", "priority": 0}, {"subject": "c"}], []),
    "no priority ranks after 2": ([{"subject": "a", "priority": 3}, {"subject": "b"}], []),
    "the longer chain first": (
        [{"subject": "a"}, {"subject": "b"}, {"subject": "c", "blockedBy": [2]}, {"subject": "d", "blockedBy": [3]}],
        [],
    ),
    "blocked by a task in progress": (
        [{"subject": "a"}, {"subject": "b", "blockedBy": [1]}],
        [_update(1, status="in_progress", owner="bob")],
    ),
    "own task in progress": (FIVE, [_update(2, status="in_progress", owner="alice"), _owner("alice")]),
    "a task in progress nobody owns": (FIVE, [_update(3, status="in_progress")]),
    "others' tasks in progress": (
        [{"subject": "a"}, {"subject": "b", "blockedBy": [1]}],
        [_update(1, status="in_progress", owner="bob"), _owner("alice")],
    ),
    "more than five held by others": (
        [*FIVE, {"subject": "six"}, {"subject": "seven", "blockedBy": [1]}],
        [_update(i, status="in_progress", owner=f"agent-{i}") for i in range(1, 7)],
    ),
    "parent and labels": (
        [{"subject": "epic"}, {"subject": "part", "parent": 1, "labels": ["ui", "bug"], "priority": 1}],
        [_update(1, status="in_progress", owner="bob")],
    ),
    "a lease that ran out": (
        [{"subject": "a"}, {"subject": "b", "blockedBy": [1]}],
        [
            _update(1, status="in_progress", owner="bob"),
            _edit(1, leaseSeconds=60, leaseExpiresAt="2020-01-01T00:00:00Z"),
        ],
    ),
    "a lease still running": (
        [{"subject": "a"}],
        [_update(1, status="in_progress", owner="bob"), _edit(1, leaseSeconds=60, leaseExpiresAt=LATER)],
    ),
    "a cycle of hand-edited links": ([{"subject": "a", "blockedBy": [2]}, {"subject": "b"}], [_edit(2, blockedBy=[1])]),
    "a link to a task gone": ([{"subject": "a"}, {"subject": "b"}], [_edit(1, blockedBy=[9])]),
    "hand-written text": (FIVE, [_edit(2, subject="Ship \x1b[31mnow\u202e", owner="a\nb", status="in_progress")]),
    "an unknown field that is no model's": (FIVE, [_edit(1, Priority="high", blocked="x")]),
    **{f"hostile: {case}": (FIVE, [_update(1, status="completed"), _hurt(READ_ALIKE[case])]) for case in READ_ALIKE},
}
LEFT_TO_THE_STORE: dict[str, tuple[list[dict[str, object]], list[Setup]]] = {
    "a gate a person approves": ([{"subject": "a", "gate": "human"}, {"subject": "b"}], []),
    "a time gate passed": (
        [{"subject": "a", "gate": {"after": "2020-01-01T00:00:00Z"}}, {"subject": "b", "blockedBy": [1]}],
        [],
    ),
    "checks running": (FIVE, [_edit(1, status="in_progress", verification={"state": "running", "until": LATER})]),
    "a field by its name in the models": (FIVE, [_edit(2, blocked_by=[1])]),
    "a priority that is not one": (FIVE, [_edit(1, priority="high")]),
    "a priority given as true": (FIVE, [_edit(1, priority=True)]),
    "an id list given as text": (FIVE, [_edit(2, blockedBy=["1"])]),
    "a link to itself": (FIVE, [_edit(2, blockedBy=[2])]),
    "a parent of 0": (FIVE, [_edit(2, parent=0)]),
    "a status that is a list": (FIVE, [_edit(2, status=["pending"])]),
    **{f"hostile: {case}": (FIVE, [_hurt(FOR_THE_MODELS[case])]) for case in FOR_THE_MODELS},
}


def _project(tmp_path: Path, tasks: list[dict[str, object]], setups: list[Setup]) -> Path:
    folder = tmp_path / "shop"
    store = FileStore(folder / ".planning")
    planner = Planner(store)
    assert planner.create_plan("Ship it", analysis="a", approach="b", date="2026-05-01", tasks=tasks).name == PLAN
    planner.create_plan("Side", analysis="a", approach="b", date="2026-05-02", tasks=[{"subject": "x"}])
    for setup in setups:
        setup(planner, folder / ".planning" / "todo" / PLAN)
    store.close()
    # The stop is judged on the session's current plan (there are two).
    handle("PostToolUse", str(folder / ".planning"), json.dumps(_payload(tool_name="Bash", tool_input={})))
    _note_plan(folder)
    return folder


def _note_plan(folder: Path) -> None:
    with hook_state.state_file(folder / ".planning", SESSION) as state:
        state["current_plan"] = PLAN


def _payload(**fields: object) -> dict[str, object]:
    return {"session_id": SESSION, "hook_event_name": "Stop", **fields}


def _hook(project: Path, payload: dict[str, object]) -> tuple[str, bool]:
    """The hook's answer, and whether it loaded pydantic (-X importtime's table on stderr)."""
    done = run_hook(project, "Stop", {"cwd": str(project), **payload}, "-X", "importtime")
    assert done.returncode == 0
    assert all(line.startswith("import time:") for line in done.stderr.splitlines()), done.stderr  # no failure
    return done.stdout.strip(), bool(PYDANTIC.search(done.stderr))


def _state(project: Path) -> dict[str, object]:
    with hook_state.state_file(project / ".planning", SESSION) as state:
        kept = dict(state)
    kept.pop("updated", None)  # the time of the call
    return kept


def _judged_alike(project: Path) -> tuple[str, bool]:
    """The hook's answer to a stop (and whether it loaded pydantic), checked against the store's
    answer to the same stop with the session state as it was: the same text, the same state."""
    saved = project / ".planning" / ".hooks" / hook_state.session_name(SESSION)
    before = saved.read_bytes()
    shown, loaded = _hook(project, _payload())
    hooked = _state(project)
    saved.write_bytes(before)
    store = FileStore(project / ".planning")
    try:
        assert shown == stop(store, store.root, _payload())
    finally:
        store.close()
    assert hooked == _state(project)
    return shown, loaded


@pytest.mark.parametrize("case", list(JUDGED_PLAINLY))
def test_a_stop_with_work_left_is_judged_plainly_as_the_store_judges_it(tmp_path: Path, case: str) -> None:
    shown, loaded = _judged_alike(_project(tmp_path, *JUDGED_PLAINLY[case]))
    assert shown  # work is left: the stop is blocked, or let through saying why
    assert not loaded  # judged without the models


@pytest.mark.parametrize("case", list(LEFT_TO_THE_STORE))
def test_a_plan_the_plain_read_cannot_take_is_left_to_the_store(tmp_path: Path, case: str) -> None:
    _, loaded = _judged_alike(_project(tmp_path, *LEFT_TO_THE_STORE[case]))
    assert loaded  # the store answered


def test_blocks_in_a_row_are_counted_alike(tmp_path: Path) -> None:
    """A stop that follows a blocked one (Claude Code's stop_hook_active) counts on, then
    lets the stop happen, saying why: the plain judgement keeps the count as the store's."""
    project = _project(tmp_path, FIVE, [])
    answers = [_hook(project, _payload(stop_hook_active=True)) for _ in range(4)]
    assert [loaded for _, loaded in answers] == [False] * 4
    assert [json.loads(a).get("decision") for a, _ in answers] == ["block", "block", "block", None]
    assert "blocked 3 times in a row" in answers[-1][0]
    assert _state(project)["stop_blocks"] == 0
