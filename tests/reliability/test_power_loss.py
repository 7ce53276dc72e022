"""Power loss on the file store: every crash state each writing operation may leave.

`kill -9` leaves the page cache; a power cut does not. tests.support.powerloss records the
file-system operations of one write (in-process, around planning_core/fileio/atomic.py and os) and builds every
state a crash may leave (unsynced entries lost, per directory in order; a crash after any
operation). For each state, a fresh store recovers as at start-up (`recover`) and then:

- every file parses (no damaged task), and the plan is as it was before or after the
  write (or, for a delete, with its neighbours' links to the task dropped and the task
  still there: the order the store chooses so that no crash leaves a link to a missing
  task); after the write returned (acknowledged), exactly as after it;
- edges are mirrored on disk (`blocks` of A holds B exactly when B's `blockedBy` holds A);
- a task created now gets an id above every id the plan ever acknowledged (never reused).

The number of states checked is printed and quoted in RELIABILITY.md.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from planning_core import Planner
from planning_core.stores.files import FileStore
from planning_core.stores.files.taskfiles import HIGHWATERMARK, TASK_FILE
from tests.support.powerloss import Op, build, crash_states, recording

Logical = dict[tuple[str, bool], dict[int, dict[str, Any]]]


def seeded(root: Path) -> tuple[Planner, str]:
    """A plan with three tasks (#2 blocked by #1), and an archived one: the tree before."""
    planner = Planner(FileStore(root))
    plan = planner.create_plan(
        "Base", analysis="a", approach="b", tasks=[{"subject": "one"}, {"subject": "two", "blockedBy": [1]}]
    )
    planner.create_task(plan.name, "three")
    old = planner.create_plan("Old", analysis="a", approach="b", tasks=[{"subject": "x"}])
    planner.update_task(old.name, 1, status="completed")
    planner.archive(old.name)
    return planner, plan.name


def copy_in(planner: Planner, plan: str) -> None:
    """`planning-mcp copy` of one plan from another folder into this store."""
    source_root = Path(str(planner.store.root) + "-source")  # type: ignore[attr-defined]
    source = Planner(FileStore(source_root))
    made = source.create_plan(
        "Copied", analysis="a", approach="b", tasks=[{"subject": "c1"}, {"subject": "c2", "blockedBy": [1]}]
    )
    record = next(r for r in FileStore(source_root).export_plans() if r.name == made.name)
    assert planner.store.import_plan(record)  # type: ignore[attr-defined]


OPERATIONS: dict[str, Callable[[Planner, str], Any]] = {
    "PlanCreate with tasks": lambda p, plan: p.create_plan(
        "New",
        analysis="a",
        approach="b",
        tasks=[{"subject": "n1"}, {"subject": "n2", "blockedBy": [1]}, {"subject": "n3"}],
    ),
    "TaskCreate with edges": lambda p, plan: p.create_task(plan, "four", blocked_by=[1, 3]),
    "TaskUpdate with edges": lambda p, plan: p.update_task(plan, 3, add_blocked_by=[1, 2]),
    "TaskUpdate delete": lambda p, plan: p.update_task(plan, 1, status="deleted"),
    "PlanArchive": lambda p, plan: p.archive(plan, force=True),
    "copy": copy_in,
}


def logical(root: Path) -> Logical:
    """The store as a fresh server sees it after start-up recovery; fails on a damaged file."""
    store = FileStore(root)
    store.recover()
    found: Logical = {}
    for archived, names in ((False, store.active_plans()), (True, store.archived_plans())):
        for name in names:
            snap = store.snapshot(name)
            assert not snap.corrupt, f"damaged after a power cut: {name}: {snap.corrupt}"
            # updatedAt aside: a task whose links start-up repair dropped is stamped anew
            found[(name, archived)] = {i: t.model_dump(exclude={"updated_at"}) for i, t in snap.tasks.items()}
    return found


def assert_edges_mirrored(root: Path) -> None:
    for folder in [*root.glob("todo/*"), *root.glob("done/*")]:
        if folder.name.startswith("."):
            continue
        docs = {
            int(m.group(1)): json.loads(f.read_text()) for f in folder.iterdir() if (m := TASK_FILE.fullmatch(f.name))
        }
        for tid, doc in docs.items():
            for other in doc.get("blockedBy", []):
                assert other not in docs or tid in docs[other].get("blocks", []), f"{folder}: #{other} -> #{tid}"
            for other in doc.get("blocks", []):
                assert other not in docs or tid in docs[other].get("blockedBy", []), (
                    f"{folder.name}: #{tid} -> #{other}"
                )


def delete_begun(before: Logical, after: Logical, now: Logical) -> bool:
    """A delete cut short the way the store orders it on purpose: its neighbours stopped naming
    the task first, and the task's own file is still there (txn.py: no crash point leaves a
    link to a missing task, which live readers would see). Repeating the delete finishes it."""
    if now.keys() != after.keys():
        return False
    for key, tasks in now.items():
        extra = set(tasks) - set(after[key])
        if {i: t for i, t in tasks.items() if i not in extra} != after[key]:
            return False
        for i in extra:
            if key not in before or i not in before[key]:
                return False
            kept, was = dict(tasks[i]), dict(before[key][i])
            for edge in ("blocks", "blocked_by"):
                kept.pop(edge), was.pop(edge)
            if kept != was:
                return False
    return True


def highest_ids(state: Logical, root: Path) -> dict[str, int]:
    """Per active plan, the highest id it ever acknowledged: its tasks and its high-water mark."""
    out: dict[str, int] = {}
    for (name, archived), tasks in state.items():
        mark = root / ("done" if archived else "todo") / name / HIGHWATERMARK
        written = int(mark.read_text()) if mark.is_file() else 0
        out[name] = max([written, *tasks])
    return out


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_every_crash_state_of_a_write_recovers_to_before_or_after(operation: str, tmp_path: Path) -> None:
    root = tmp_path / "root"
    planner, plan = seeded(root)
    before_tree = tmp_path / "before"
    shutil.copytree(root, before_tree, symlinks=True)
    with recording(root) as rec:
        OPERATIONS[operation](planner, plan)
    ops: list[Op] = rec.ops
    assert any(op.kind == "fsync_dir" for op in ops), ops
    after_tree = tmp_path / "after"
    shutil.copytree(root, after_tree, symlinks=True)
    shutil.copytree(before_tree, tmp_path / "before-seen", symlinks=True)  # recovery may write: not on the original
    before, after = logical(tmp_path / "before-seen"), logical(after_tree)
    acknowledged, finally_acknowledged = highest_ids(before, before_tree), highest_ids(after, after_tree)
    checked = 0
    for n, state in enumerate(crash_states(ops)):
        crashed = tmp_path / f"crash-{n}"
        build(before_tree, ops, state, crashed)
        now = logical(crashed)
        where = f"{operation}: crash after {state.point} of {len(ops)} operations, kept {state.kept}: {ops}"
        if state.point == len(ops):
            assert now == after, f"an acknowledged write lost; {where}"
        else:
            assert now in (before, after) or delete_begun(before, after, now), f"neither before nor after; {where}"
        assert_edges_mirrored(crashed)
        store = Planner(FileStore(crashed))
        for name, highest in (finally_acknowledged if state.point == len(ops) else acknowledged).items():
            if (name, False) in now:
                made = store.create_task(name, "after the power cut")
                assert made.id > highest, f"id #{made.id} reused in {name}; {where}"
        shutil.rmtree(crashed)
        checked += 1
    print(f"power loss: {operation}: {len(ops)} file-system operations, {checked} crash states checked")
    assert checked > len(ops)


def test_the_checker_catches_a_write_without_its_folder_fsync(tmp_path: Path) -> None:
    """The same TaskCreate, its folder fsyncs left out: some state after it returned has lost
    it (the checker is not vacuous: the fsyncs are what makes the write survive)."""
    root = tmp_path / "root"
    planner, plan = seeded(root)
    before_tree = tmp_path / "before"
    shutil.copytree(root, before_tree, symlinks=True)
    with recording(root) as rec:
        OPERATIONS["TaskCreate with edges"](planner, plan)
    unsynced = [op for op in rec.ops if op.kind != "fsync_dir"]
    after = logical(root)
    lost = 0
    for n, state in enumerate(s for s in crash_states(unsynced) if s.point == len(unsynced)):
        crashed = tmp_path / f"crash-{n}"
        build(before_tree, unsynced, state, crashed)
        lost += logical(crashed) != after
    assert lost > 0


def test_no_power_cut_brings_back_the_id_of_a_deleted_highest_task(tmp_path: Path) -> None:
    """A create's mark is not synced when the task files reach the old mark (txn.py): a power
    cut may leave it empty, and the ids on disk then decide. So the delete of the highest
    task, acknowledged after such a create, must leave a mark that survives, or the next
    create after a power cut reuses the deleted task's id."""
    root = tmp_path / "root"
    planner, plan = seeded(root)
    before_tree = tmp_path / "before"
    shutil.copytree(root, before_tree, symlinks=True)
    with recording(root) as rec:
        top = planner.create_task(plan, "top").id
        deleted_at = len(rec.ops)  # the create is acknowledged once its operations are made
        planner.update_task(plan, top, status="deleted")
    assert any(op.kind == "create" and not op.synced for op in rec.ops[:deleted_at]), rec.ops  # the lazy mark
    checked = 0
    for n, state in enumerate(crash_states(rec.ops)):
        crashed = tmp_path / f"crash-{n}"
        build(before_tree, rec.ops, state, crashed)
        logical(crashed)  # every file parses
        made = Planner(FileStore(crashed)).create_task(plan, "after the power cut")
        floor = top if state.point >= deleted_at else top - 1
        assert made.id > floor, f"id #{made.id} reused; crash after {state.point} of {rec.ops}, kept {state.kept}"
        shutil.rmtree(crashed)
        checked += 1
    print(f"power loss: a create then the delete of its task: {len(rec.ops)} operations, {checked} crash states")
