"""`planning-mcp board`, `graph`, `status --json`, `watch --once`, the Mermaid renderer
and the diagram in the plans://{name} resource."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planning_core import Planner
from planning_core.actions import Actions
from planning_core.models import WIRE, Task
from planning_core.rendering.mermaid import label_text, plans_graph, task_graph
from planning_core.rendering.rows import BOARD_TASK_FIELDS
from planning_core.stores.files import FileStore
from server.cli import main
from server.mcp.resources import plan_text
from server.mcp.state import AppState
from tests.support.seed import PLAN_NAME, SUBJECTS

SEED_GRAPH = """flowchart TD
    T1["#1 Design auth schema"]
    T2["#2 Implement JWT middleware"]
    T3["#3 Add login endpoint"]
    T4["#4 Add logout endpoint"]
    T1 --> T2
    T2 --> T3
    T2 --> T4
    classDef completed fill:#162118,stroke:#3fb950,color:#3fb950
    classDef in_progress fill:#2d1b00,stroke:#e3b341,color:#e3b341
    classDef pending fill:#21262d,stroke:#8b949e,color:#c9d1d9
    classDef unreadable fill:#3b1219,stroke:#f85149,color:#f85149,stroke-dasharray:4 3
    class T1,T2 completed
    class T3 in_progress
    class T4 pending"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_board_shows_status_owner_and_open_blockers(
    root: Path, seeded: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Planner(FileStore(root)).update_task(PLAN_NAME, 4, add_blocked_by=[3])
    rc, out, _ = run(capsys, "board", "--root", str(root))
    assert rc == 0
    assert out.splitlines() == [
        f"{PLAN_NAME} [2/4 done]  Add auth",
        "#1 [completed] Design auth schema",
        "#2 [completed] Implement JWT middleware",
        "#3 [in_progress] Add login endpoint (alice)",
        "#4 [pending] Add logout endpoint [blocked by #3]",
    ]


def test_board_json_and_name_matching(root: Path, seeded: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "--root", str(root), "board", "add-auth", "--json")
    assert rc == 0
    data = json.loads(out)
    plan = data["plans"][0]
    assert (plan["name"], plan["progress"]["completed"], plan["current"]) == (PLAN_NAME, 2, SUBJECTS[2])
    shown = {
        "id": 3,
        "subject": SUBJECTS[2],
        "status": "in_progress",
        "owner": "alice",
        "priority": None,  # a board row shows each of its fields, set or not
        "labels": [],
        "parent": None,
        "gate": None,
        "activeForm": "",
        "blockedBy": [2],
        "blocks": [],
        "acceptance": [],
        "verification": None,
        "notes": [],
        "openBlockers": [],
    }
    # And each field a later rule puts on the card (FieldRule.board), empty.
    fields = {WIRE[n]: n for n in BOARD_TASK_FIELDS if n in WIRE and WIRE[n] not in shown}
    later = {wire: Task.model_fields[n].get_default(call_default_factory=True) for wire, n in fields.items()}
    assert plan["tasks"][2] == shown | later
    Planner(FileStore(root)).create_plan("Add audit", analysis="a", approach="b", date="2026-05-29")
    rc, _, err = run(capsys, "board", "add", "--root", str(root))
    assert rc == 1 and "matches several plans" in err and err.count("\n") == 1
    rc, _, err = run(capsys, "board", "nope", "--root", str(root))
    assert rc == 1 and "not found" in err and PLAN_NAME in err


def test_status_json(root: Path, seeded: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "status", "--json", "--root", str(root))
    data = json.loads(out)
    assert rc == 0 and data["root"] == str(root.absolute())
    assert [t["status"] for t in data["plans"][0]["tasks"]] == ["completed", "completed", "in_progress", "pending"]
    rc, out, _ = run(capsys, "status", "--root", str(root))
    assert out.startswith("[Session Plan] Active tasks:\n")


def test_read_only_commands_never_create_a_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "typo"
    for cmd in (["board"], ["graph"], ["watch", "--once"]):
        rc, out, err = run(capsys, *cmd, "--root", str(missing))
        assert rc == 2 and out == ""
        assert err.count("\n") == 1 and "--root" in err and str(missing) in err
    assert not missing.exists()


def test_graph_cli_matches_the_seed_style(root: Path, seeded: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "graph", "--root", str(root))
    assert rc == 0 and out.rstrip("\n") == SEED_GRAPH


def test_graph_of_several_plans_uses_subgraphs(root: Path, seeded: str) -> None:
    store = FileStore(root)
    Planner(store).create_plan(
        "Add audit", analysis="a", approach="b", date="2026-05-29", tasks=[{"subject": "Log logins"}]
    )
    text = plans_graph([store.snapshot(n) for n in store.active_plans()])
    assert 'subgraph P1["2026-05-28-add-auth"]' in text and 'subgraph P2["2026-05-29-add-audit"]' in text
    assert "P1_T1 --> P1_T2" in text and 'P2_T1["#1 Log logins"]' in text
    assert "class P1_T4,P2_T1 pending" in text


def test_labels_are_escaped_and_bounded() -> None:
    assert label_text('say "hi" <b>x</b> #quot; #1 ok') == "say #quot;hi#quot; #lt;b#gt;x#lt;/b#gt; #35;quot; #1 ok"
    assert label_text("a\nb\tc") == "a b c"
    assert len(label_text("x" * 500)) == 60
    assert task_graph([]) == 'flowchart TD\n    empty["(no tasks yet)"]'


def test_unreadable_task_is_a_red_node(root: Path, seeded: str) -> None:
    (root / "todo" / PLAN_NAME / "task_2.json").write_text("{torn")
    store = FileStore(root)
    snap = store.snapshot(PLAN_NAME)
    text = task_graph(list(snap.tasks.values()), snap.corrupt)
    assert 'T2["#2 unreadable: task_2.json"]' in text
    assert "T2 --> T3" in text and "class T2 unreadable" in text


def test_plan_resource_has_the_board_then_the_diagram(root: Path, seeded: str) -> None:
    store = FileStore(root)
    planner = Planner(store)
    text = plan_text(AppState(store=store, actions=Actions(planner)), PLAN_NAME)
    board_at = text.index("## Tasks")
    mermaid_at = text.index("```mermaid\n")
    assert board_at < mermaid_at
    assert text[mermaid_at:] == f"```mermaid\n{SEED_GRAPH}\n```\n"


def test_watch_once_renders_progress_and_work_in_progress(
    root: Path, seeded: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, _ = run(capsys, "watch", "--once", "--root", str(root))
    assert rc == 0
    assert PLAN_NAME in out and "2/4 done" in out and "50%" in out
    assert "#3 Add login endpoint" in out and "(alice)" in out and "next: #4 Add logout endpoint" in out
