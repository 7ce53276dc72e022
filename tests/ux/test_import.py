"""`planning-mcp import` of the other tools' task files and `export --format beads`, run
as a user runs them (a real CLI subprocess) on written samples of each documented format
(tests/ux/fixtures/import/), into the file store and PostgreSQL."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from planning_core import safetext
from planning_core.import_export.import_formats import MAX_IMPORT_BYTES
from planning_core.import_export.importing import MAX_IMPORTED_LINKS
from planning_core.store import PlanStore
from tests.support.procs import run_cli
from tests.support.seed import make_plan
from tests.support.store_urls import opened_store
from tests.support.stores import assert_mirrored, stored_state

SAMPLES = Path(__file__).parent / "fixtures" / "import"


@pytest.fixture(params=["files", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "files":
        return str(tmp_path / "root")
    from tests.support.pg import fresh_database_url

    return fresh_database_url()


def cli(*args: str) -> tuple[int, str, str]:
    done = run_cli(list(args))
    return done.returncode, done.stdout, done.stderr


def by_subject(store: PlanStore, plan: str) -> dict[str, dict[str, Any]]:
    """The plan's tasks by subject, their links by subject too: what a user reads."""
    tasks = assert_mirrored(store, plan)
    subject = {i: t["subject"] for i, t in tasks.items()}
    return {
        t["subject"]: {
            "status": t["status"],
            "owner": t.get("owner", ""),
            "blockedBy": sorted(subject[b] for b in t.get("blockedBy", [])),
            "metadata": t.get("metadata", {}),
            "description": t.get("description", ""),
            "activeForm": t.get("activeForm", ""),
            "priority": t.get("priority"),
            "labels": t.get("labels", []),
            "parent": subject[t["parent"]] if "parent" in t else None,
        }
        for t in tasks.values()
    }


def only_plan(store: PlanStore) -> str:
    plans = store.active_plans()
    assert len(plans) == 1, plans
    return plans[0]


def test_beads_issues_become_a_plan(store_url: str) -> None:
    rc, out, err = cli("import", str(SAMPLES / "beads"), "--store", store_url)
    assert rc == 0, err
    assert "imported 4 tasks from beads into the new plan" in out
    for store in opened_store(store_url):
        tasks = by_subject(store, only_plan(store))
        jwt = tasks["Implement JWT middleware"]
        assert (jwt["status"], jwt["owner"], jwt["blockedBy"]) == ("in_progress", "bob", ["Design the auth schema"])
        assert jwt["metadata"] == {
            "priority": 0,
            "type": "task",
            "labels": ["auth"],
            "source": {"tool": "beads", "id": "bd-c3d4", "status": "in_progress"},
        }
        assert tasks["Design the auth schema"]["status"] == "completed"
        login = tasks["Add the login endpoint"]
        # blocked is a pending task whose blocker is open; parent-child is kept, not a blocking edge
        assert (login["status"], login["blockedBy"]) == ("pending", ["Implement JWT middleware"])
        assert login["metadata"]["parent"] == "bd-9z8y"
        # beads' priority, labels and parent-child are the task's own fields too
        assert (jwt["priority"], jwt["labels"], jwt["parent"]) == (0, ["auth"], None)
        assert (login["priority"], login["parent"]) == (2, "Auth epic")
        assert tasks["Auth epic"]["metadata"]["related"] == [{"id": "bd-a1b2", "type": "related"}]
        # a deleted issue (a tombstone) is left out, and the link to it
        assert "An idea dropped" not in tasks and tasks["Auth epic"]["blockedBy"] == []


def test_taskmaster_tags_become_plans_and_subtasks_tasks(tmp_path: Path) -> None:
    root = str(tmp_path / "root")
    rc, out, err = cli("import", str(SAMPLES / "taskmaster"), "--root", root)
    assert rc == 0, err
    assert len(out.splitlines()) == 2  # master and feature-x
    for store in opened_store(root):
        master, feature = sorted(store.active_plans(), key=len)
        assert store.title(feature).endswith("(feature-x)")
        tasks = by_subject(store, master)
        api = tasks["Build the API"]
        # the parent waits for its own subtasks and its dependencies
        assert api["blockedBy"] == ["Define the routes", "Set up the repository", "Write the handlers"]
        assert (api["status"], api["metadata"]["priority"]) == ("in_progress", "medium")
        assert api["priority"] == 2  # Task Master's high / medium / low: 1 / 2 / 3
        assert tasks["Write the handlers"]["parent"] == "Build the API"
        assert tasks["Write the handlers"]["blockedBy"] == ["Define the routes"]
        assert tasks["Write the handlers"]["metadata"]["source"]["id"] == "2.2"
        assert tasks["Write the docs"]["blockedBy"] == ["Build the API"]
        assert tasks["Write the docs"]["status"] == "pending"  # deferred
        assert tasks["Set up the repository"]["description"] == "Scaffold the project.\n\nUse uv and ruff."


def test_taskmaster_tag_chosen(tmp_path: Path) -> None:
    root = str(tmp_path / "root")
    rc, _, err = cli("import", str(SAMPLES / "taskmaster"), "--tag", "feature-x", "--plan", "spike", "--root", root)
    assert rc == 0, err
    for store in opened_store(root):
        plan = only_plan(store)
        assert plan.endswith("-spike")
        assert list(by_subject(store, plan)) == ["Spike feature X"]


def test_claude_code_task_list(tmp_path: Path) -> None:
    root = str(tmp_path / "root")
    rc, _, err = cli("import", str(SAMPLES / "claude" / "team-list"), "--root", root)
    assert rc == 0, err
    for store in opened_store(root):
        tasks = by_subject(store, only_plan(store))
        fix = tasks["Fix the parser bug"]
        assert (fix["status"], fix["owner"], fix["activeForm"]) == (
            "in_progress",
            "researcher",
            "Fixing the parser bug",
        )
        assert tasks["Release 1.2"]["blockedBy"] == ["Add parser tests", "Fix the parser bug"]
        assert tasks["Release 1.2"]["metadata"]["area"] == "release"


def test_speckit_phases_block_the_next_phase(tmp_path: Path) -> None:
    root = str(tmp_path / "root")
    rc, _, err = cli("import", str(SAMPLES / "speckit" / "tasks.md"), "--root", root)
    assert rc == 0, err
    for store in opened_store(root):
        plan = only_plan(store)
        assert store.title(plan) == "Tasks: Photo albums"
        tasks = by_subject(store, plan)
        # A phase waits for the one before through its checkpoint, blocked by every task of it.
        checkpoint = tasks["Checkpoint: Phase 1: Setup done"]
        assert checkpoint["blockedBy"] == [
            "Configure linting in pyproject.toml",
            "Create the project structure per the implementation plan",
        ]
        assert checkpoint["description"].startswith("The project builds and lints clean.\n\n")
        assert checkpoint["metadata"]["source"]["id"] == "checkpoint-1"
        schema = tasks["Set up the database schema in src/db/schema.py"]
        assert schema["blockedBy"] == ["Checkpoint: Phase 1: Setup done"]
        assert tasks["Add the album model in src/models/album.py"]["blockedBy"] == ["Checkpoint: Phase 1: Setup done"]
        service = tasks["Implement the album service in src/services/album.py"]
        assert service["blockedBy"] == ["Checkpoint: Phase 2: Foundational done"]
        assert "Checkpoint: Phase 3: User Story 1 - Create albums (Priority: P1) done" not in tasks  # none waits for it
        model = tasks["Add the album model in src/models/album.py"]
        assert model["metadata"]["parallel"] is True
        assert model["metadata"]["labels"] == ["US1"]
        assert model["metadata"]["source"]["id"] == "T004"
        assert tasks["Create the project structure per the implementation plan"]["status"] == "completed"


def test_phases_are_linked_in_proportion_to_their_tasks(tmp_path: Path) -> None:
    """Two phases of 1,000 tasks: 2,000 links through the checkpoint (each task of the
    second blocked by each of the first made a million, and a plan of hundreds of MB)."""
    source = tmp_path / "tasks.md"
    phase = [f"- [ ] T{k:05d} task {k}" for k in range(1, 2001)]
    source.write_text("\n".join(["# Big", "## Phase 1", *phase[:1000], "## Phase 2", *phase[1000:]]) + "\n")
    root = str(tmp_path / "root")
    rc, out, err = cli("import", str(source), "--root", root)
    assert rc == 0, err
    assert "imported 2001 tasks" in out
    for store in opened_store(root):
        tasks = store.view(only_plan(store)).tasks
        assert sum(len(t.blocked_by) for t in tasks.values()) == 2000
        assert tasks[1001].subject == "Checkpoint: Phase 1 done" and len(tasks[1001].blocked_by) == 1000
        assert tasks[1002].blocked_by == [1001] and tasks[2001].blocked_by == [1001]


def test_kiro_subtasks_block_their_parent(tmp_path: Path) -> None:
    root = str(tmp_path / "root")
    rc, _, err = cli("import", str(SAMPLES / "kiro" / "tasks.md"), "--format", "tasksmd", "--root", root)
    assert rc == 0, err
    for store in opened_store(root):
        tasks = by_subject(store, only_plan(store))
        assert tasks["Implement the data models"]["blockedBy"] == [
            "Write the Album model",
            "Write the User model with validation",
        ]
        assert tasks["Write the User model with validation"]["status"] == "completed"
        assert tasks["Wire the API"]["metadata"]["source"]["id"] == "3"


def test_reimport_updates_instead_of_duplicating(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(SAMPLES / "beads", project)
    root = str(tmp_path / "root")
    assert cli("import", str(project), "--root", root)[0] == 0
    issues = project / ".beads" / "issues.jsonl"
    lines = [json.loads(ln) for ln in issues.read_text().splitlines()]
    lines[1]["status"], lines[1]["title"] = "closed", "Implement the JWT middleware"
    lines.append(
        {
            "id": "bd-n3w1",
            "title": "Add logout",
            "status": "open",
            "priority": 3,
            "dependencies": [{"issue_id": "bd-n3w1", "depends_on_id": "bd-c3d4", "type": "blocks"}],
        }
    )
    issues.write_text("".join(json.dumps(x) + "\n" for x in lines))
    rc, out, err = cli("import", str(project), "--root", root)
    assert rc == 0, err
    assert "1 added, 1 updated, 3 unchanged" in out
    for store in opened_store(root):
        tasks = by_subject(store, only_plan(store))
        assert len(tasks) == 5
        assert tasks["Implement the JWT middleware"]["status"] == "completed"
        assert tasks["Add logout"]["blockedBy"] == ["Implement the JWT middleware"]


def test_export_to_beads_reimports_to_the_same_plan(store_url: str, tmp_path: Path) -> None:
    assert cli("import", str(SAMPLES / "beads"), "--store", store_url)[0] == 0
    rc, exported, err = cli("export", "--format", "beads", "--store", store_url)
    assert rc == 0, err
    assert [json.loads(ln)["id"] for ln in exported.splitlines()] == ["bd-a1b2", "bd-c3d4", "bd-e5f6", "bd-9z8y"]
    out_file = tmp_path / "exported.jsonl"
    out_file.write_text(exported)
    rc, out, err = cli("import", str(out_file), "--store", store_url, "--plan", "beads")
    assert rc == 0, err
    assert "0 added, 0 updated, 4 unchanged" in out  # the same plan, not a copy
    assert cli("import", str(out_file), "--store", store_url, "--plan", "again")[0] == 0
    for store in opened_store(store_url):
        first, again = sorted(store.active_plans(), key=lambda n: n.endswith("-again"))
        assert by_subject(store, again) == by_subject(store, first)


def write_beads(path: Path, *issues: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in issues))
    return path


def blocks(issue: str, on: str) -> dict[str, str]:
    return {"issue_id": issue, "depends_on_id": on, "type": "blocks"}


def hostile_cycle(tmp: Path) -> Path:
    return write_beads(
        tmp / "cycle.jsonl",
        {"id": "bd-1", "title": "a", "dependencies": [blocks("bd-1", "bd-2")]},
        {"id": "bd-2", "title": "b", "dependencies": [blocks("bd-2", "bd-3")]},
        {"id": "bd-3", "title": "c", "dependencies": [blocks("bd-3", "bd-1")]},
    )


def hostile_missing(tmp: Path) -> Path:
    return write_beads(tmp / "missing.jsonl", {"id": "bd-1", "title": "a", "dependencies": [blocks("bd-1", "bd-404")]})


def hostile_invalid_json(tmp: Path) -> Path:
    path = tmp / "bad.jsonl"
    path.write_text('{"id": "bd-1", "title": "a"}\n{"id": "bd-2", "title": \n')
    return path


def hostile_symlink(tmp: Path) -> Path:
    link = tmp / "link.jsonl"
    link.symlink_to(SAMPLES / "beads" / ".beads" / "issues.jsonl")
    return link


def hostile_too_big(tmp: Path) -> Path:
    path = tmp / "huge.jsonl"
    with path.open("wb") as f:
        f.truncate(MAX_IMPORT_BYTES + 1)  # sparse: the bound is judged before reading
    return path


def hostile_no_file(tmp: Path) -> Path:
    return tmp / "nowhere" / "issues.jsonl"


def hostile_long_number(tmp: Path) -> Path:
    path = tmp / "number.jsonl"
    path.write_text('{"id": "bd-1", "title": "a", "priority": %s}\n' % ("9" * 4301))
    return path


def hostile_many_links(tmp: Path) -> Path:
    """1,001 issues, each blocked by 50 before it: 50,050 links, over MAX_IMPORTED_LINKS."""
    issues = [{"id": f"bd-{k}", "title": f"t{k}"} for k in range(50)]
    issues += [
        {"id": f"bd-{k}", "title": f"t{k}", "dependencies": [blocks(f"bd-{k}", f"bd-{j}") for j in range(k - 50, k)]}
        for k in range(50, 1051)
    ]
    return write_beads(tmp / "links.jsonl", *issues)


HOSTILE = {
    hostile_no_file: "no such file",
    hostile_cycle: "cycle bd-1 -> bd-2 -> bd-3 -> bd-1",
    hostile_missing: "bd-1 depends on bd-404, which the source does not hold",
    hostile_invalid_json: "invalid JSON on line 2 (column 25)",  # the line once, then where in it
    hostile_symlink: "symbolic link",
    hostile_too_big: f"at most {MAX_IMPORT_BYTES:,}",
    hostile_long_number: "a number on line 1 has over 4,300 digits",
    hostile_many_links: f"blocked by 50,050 links in all; at most {MAX_IMPORTED_LINKS:,} are imported",
}


@pytest.mark.parametrize("make", list(HOSTILE), ids=lambda f: f.__name__)
def test_hostile_input_is_refused_and_writes_nothing(make: Any, tmp_path: Path) -> None:
    root = str(tmp_path / "root")
    assert cli("import", str(SAMPLES / "beads"), "--root", root, "--plan", "mine")[0] == 0
    for store in opened_store(root):
        before = stored_state(store)
    rc, out, err = cli("import", str(make(tmp_path)), "--format", "beads", "--root", root, "--plan", "mine")
    assert rc == 2, (out, err)
    assert HOSTILE[make] in err
    assert len(err.strip().splitlines()) == 1 and "nothing was written" in err
    for store in opened_store(root):
        assert stored_state(store) == before


def test_metadata_of_any_shape_is_imported_and_exported(tmp_path: Path) -> None:
    """A Claude Code task's metadata is kept as it is: `labels: 5` is no list of labels
    (the task gets none), and the export writes what was kept."""
    folder = tmp_path / "list"
    folder.mkdir()
    (folder / "1.json").write_text(json.dumps({"id": "1", "subject": "s", "metadata": {"labels": 5, "related": 7}}))
    root = str(tmp_path / "root")
    rc, _, err = cli("import", str(folder), "--format", "claude", "--root", root)
    assert rc == 0, err
    rc, exported, err = cli("export", "--format", "beads", "--root", root)
    assert rc == 0, err
    assert "labels" not in json.loads(exported)


def test_export_escapes_control_characters_from_files(tmp_path: Path) -> None:
    """A hand-edited task file may hold C1 and bidi controls; the export writes them as
    JSON escapes (the same value for a JSON reader), never raw to a terminal or a file."""
    root = tmp_path / "root"
    make_plan(root, "controls", [{"subject": "plain", "description": ""}])
    task_file = next((root / "todo").glob("*/task_1.json"))
    doc = json.loads(task_file.read_text())
    doc["subject"], doc["owner"] = "pay \u202eevil\u202c now \x9b31m", "al\x85ice"
    task_file.write_text(json.dumps(doc, ensure_ascii=False))
    rc, exported, err = cli("export", "--format", "beads", "--root", str(root))
    assert rc == 0, err
    assert safetext.escape(exported, multiline=True) == exported  # nothing the rule refuses, raw
    issue = json.loads(exported)
    assert (issue["title"], issue["assignee"]) == (doc["subject"], doc["owner"])


def test_notes_go_out_as_beads_comments_and_come_back(store_url: str, tmp_path: Path) -> None:
    """A task's handoff notes are its beads issue's comments: exported, imported into a new
    plan as notes, and kept (never replaced) when the same issues are imported again."""
    source = write_beads(
        tmp_path / "notes.jsonl",
        {
            "id": "bd-1",
            "title": "a",
            "comments": [{"id": 1, "author": "ann", "text": "half done", "created_at": "2026-05-28T09:00:00Z"}],
        },
    )
    assert cli("import", str(source), "--store", store_url, "--plan", "notes")[0] == 0
    for store in opened_store(store_url):
        [plan] = store.active_plans()
        assert store.get_task(plan, 1).notes == [{"by": "ann", "at": "2026-05-28T09:00:00Z", "text": "half done"}]
        with store.transaction(plan) as txn:  # a note written here meanwhile
            task = txn.get(1)
            task.notes = [*task.notes, {"by": "bob", "at": "2026-05-28T10:00:00Z", "text": "finished"}]
            txn.put(task)
    rc, exported, err = cli("export", "--format", "beads", "--store", store_url)
    assert rc == 0, err
    [issue] = [json.loads(ln) for ln in exported.splitlines()]
    assert [(c["author"], c["text"]) for c in issue["comments"]] == [("ann", "half done"), ("bob", "finished")]
    assert cli("import", str(source), "--store", store_url, "--plan", "notes")[0] == 0  # the older file again
    out_file = tmp_path / "exported.jsonl"
    out_file.write_text(exported)
    assert cli("import", str(out_file), "--store", store_url, "--plan", "copy")[0] == 0
    for store in opened_store(store_url):
        for plan in store.active_plans():
            assert [n["text"] for n in store.get_task(plan, 1).notes] == ["half done", "finished"], plan
