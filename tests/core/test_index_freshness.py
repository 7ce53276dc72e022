"""The plan index (planning_core/stores/files/foldercache.py) and the TaskList pages kept on
top of it (planning_core/pages.py) never serve stale data: whatever changed a task file
since the last read shows on the next call, with no wait in between. Real files; the
other writer is a real second process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from weakref import WeakKeyDictionary

import pytest

from planning_core import Planner, Session
from planning_core.actions import Actions
from planning_core.caller import NOBODY, Caller
from planning_core.stores.files import FileStore, fswatch
from tests.support.procs import wait_until
from tests.support.seed import list_tasks

REPO = Path(__file__).resolve().parents[2]

WRITER = """
import sys
from planning_core import Planner
from planning_core.stores.files import FileStore
from planning_core.stores.files import fswatch
Planner(FileStore(sys.argv[1])).update_task(sys.argv[2], int(sys.argv[3]), subject=sys.argv[4])
"""


@pytest.fixture
def planned(tmp_path: Path) -> tuple[FileStore, Planner, str, Path]:
    store = FileStore(tmp_path / "root")
    store.ensure_writable()
    planner = Planner(store)
    plan = planner.create_plan(title="Fresh", analysis="a", approach="b", name="fresh").name
    for i in range(1, 6):
        planner.create_task(plan, subject=f"Task {i}", description="d")
    # Warm the index and the kept pages: every later read must notice what changed after this one.
    assert list(subjects(planner, plan).values())[:2] == ["Task 1", "Task 2"]
    planner.summaries()
    return store, planner, plan, store.todo / plan


_actions: WeakKeyDictionary[Planner, Actions] = WeakKeyDictionary()  # one per planner: its pages are kept


def subjects(planner: Planner, plan: str) -> dict[int, str]:
    """Each task's subject as TaskList answers it (the page the server sends, kept or not),
    checked against its text and against the planner's own page."""
    actions = _actions.setdefault(planner, Actions(planner))
    answer = actions.task_list(Caller(NOBODY, Session()), plan)
    rows = {row["id"]: row["subject"] for row in answer.structured()["tasks"]}
    assert rows == {t.id: t.subject for t in list_tasks(planner, plan).tasks}
    for task_id, subject in rows.items():
        assert f"#{task_id} [" in answer.text and subject in answer.text
    return rows


def test_the_index_is_kept_by_the_os_where_it_can_be(planned: tuple[FileStore, Planner, str, Path]) -> None:
    """On Linux the tests below exercise the inotify path, not the stat-per-file fallback."""
    store, _, _, _ = planned
    if not sys.platform.startswith("linux"):
        pytest.skip("inotify is Linux's; elsewhere the index stats every file")
    if not fswatch.Watcher().available:  # the machine's inotify instances are all taken (EMFILE)
        pytest.skip("no inotify instance left on this machine: the fallback is what runs")
    assert store.cache.watching


def test_a_change_by_another_process_shows_on_the_next_call(planned: tuple[FileStore, Planner, str, Path]) -> None:
    store, planner, plan, _ = planned
    subprocess.run([sys.executable, "-c", WRITER, str(store.root), plan, "3", "From elsewhere"], check=True, cwd=REPO)
    assert subjects(planner, plan)[3] == "From elsewhere"
    assert planner.get_task(plan, 3).subject == "From elsewhere"


def test_a_hand_edit_written_in_place_shows(planned: tuple[FileStore, Planner, str, Path]) -> None:
    _, planner, plan, folder = planned
    path = folder / "task_2.json"
    data = json.loads(path.read_text())
    data["subject"] = "Edited in place"
    data["status"] = "in_progress"
    before = path.stat().st_ino
    with open(path, "r+") as f:  # the same inode: the folder's own mtime does not move
        f.write(json.dumps(data, indent=2))
        f.truncate()
    assert path.stat().st_ino == before
    assert subjects(planner, plan)[2] == "Edited in place"
    (summary,) = planner.summaries()
    assert summary.current == "Edited in place"
    assert summary.progress.in_progress == 1


def test_a_same_size_in_place_edit_within_one_clock_tick_shows(planned: tuple[FileStore, Planner, str, Path]) -> None:
    _, planner, plan, folder = planned
    path = folder / "task_4.json"
    text = path.read_text()
    st = path.stat()
    with open(path, "r+") as f:
        f.write(text.replace("Task 4", "Tusk 4"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # even with the old mtime put back
    assert subjects(planner, plan)[4] == "Tusk 4"


def test_a_hand_edit_by_rename_shows(planned: tuple[FileStore, Planner, str, Path]) -> None:
    _, planner, plan, folder = planned
    data = json.loads((folder / "task_1.json").read_text())
    data["subject"] = "Renamed in"
    tmp = folder / "edit.tmp"
    tmp.write_text(json.dumps(data))
    os.replace(tmp, folder / "task_1.json")
    assert subjects(planner, plan)[1] == "Renamed in"


def test_a_deleted_task_file_is_gone_on_the_next_call(planned: tuple[FileStore, Planner, str, Path]) -> None:
    _, planner, plan, folder = planned
    (folder / "task_5.json").unlink()
    assert 5 not in subjects(planner, plan)
    (summary,) = planner.summaries()
    assert summary.progress.total == 4


def test_a_new_task_file_by_hand_shows(planned: tuple[FileStore, Planner, str, Path]) -> None:
    _, planner, plan, folder = planned
    data = json.loads((folder / "task_1.json").read_text())
    data.update(id=9, subject="Made by hand")
    (folder / "task_9.json").write_text(json.dumps(data))
    assert subjects(planner, plan)[9] == "Made by hand"


def test_a_damaged_file_is_reported_on_the_next_call(planned: tuple[FileStore, Planner, str, Path]) -> None:
    _, planner, plan, folder = planned
    with open(folder / "task_3.json", "r+") as f:  # damaged in place
        f.write("{ not json")
    page = list_tasks(planner, plan)
    assert [c.task_id for c in page.unreadable] == [3]
    assert 3 not in {t.id for t in page.tasks}
    (summary,) = planner.summaries()
    assert summary.unreadable == 1
    # ... and mended again, in place.
    with open(folder / "task_3.json", "w") as f:
        json.dump(json.loads((folder / "task_1.json").read_text()) | {"id": 3, "subject": "Mended"}, f)
    page = list_tasks(planner, plan)
    assert page.unreadable == []
    assert subjects(planner, plan)[3] == "Mended"


def test_a_title_edited_in_place_shows(planned: tuple[FileStore, Planner, str, Path]) -> None:
    _, planner, plan, folder = planned
    md = folder / "plan.md"
    text = md.read_text()
    with open(md, "r+") as f:
        f.write("# Retitled" + text.partition("\n")[1] + text.partition("\n")[2])
        f.truncate()
    assert planner.summaries()[0].title == "Retitled"
    assert list_tasks(planner, plan).plan.title == "Retitled"


def test_a_plan_folder_replaced_under_the_same_name_is_read_afresh(
    planned: tuple[FileStore, Planner, str, Path],
) -> None:
    store, planner, plan, folder = planned
    copy = store.todo / ".elsewhere"
    subprocess.run(["cp", "-r", str(folder), str(copy)], check=True)
    data = json.loads((copy / "task_2.json").read_text())
    data["subject"] = "In the copy"
    (copy / "task_2.json").write_text(json.dumps(data))
    subprocess.run(["rm", "-rf", str(folder)], check=True)
    os.rename(copy, folder)
    assert subjects(planner, plan)[2] == "In the copy"
    # and the new folder is watched in its turn
    subprocess.run([sys.executable, "-c", WRITER, str(store.root), plan, "2", "Then changed"], check=True, cwd=REPO)
    assert subjects(planner, plan)[2] == "Then changed"


def test_a_write_builds_on_what_another_process_just_wrote(planned: tuple[FileStore, Planner, str, Path]) -> None:
    """Under the lock a write takes the task from the index: the other process's change is
    in it, not lost under this write's own."""
    store, planner, plan, folder = planned
    subprocess.run([sys.executable, "-c", WRITER, str(store.root), plan, "3", "From elsewhere"], check=True, cwd=REPO)
    planner.update_task(plan, 3, description="ours")
    kept = json.loads((folder / "task_3.json").read_text())
    assert (kept["subject"], kept["description"]) == ("From elsewhere", "ours")


def test_a_write_builds_on_a_hand_edit_made_in_place(planned: tuple[FileStore, Planner, str, Path]) -> None:
    _, planner, plan, folder = planned
    path = folder / "task_4.json"
    text = path.read_text()
    st = path.stat()
    with open(path, "r+") as f:  # same inode, same size, the old mtime put back
        f.write(text.replace("Task 4", "Tusk 4"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    planner.update_task(plan, 4, description="ours")
    kept = json.loads(path.read_text())
    assert (kept["subject"], kept["description"]) == ("Tusk 4", "ours")


HOLDER = """
import fcntl, json, os, sys
folder = sys.argv[1]
fd = os.open(os.path.join(folder, ".lock"), os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
path = os.path.join(folder, "task_3.json")
with open(path) as f:
    data = json.load(f)
data["subject"] = "While you waited"
with open(path + ".new", "w") as f:
    json.dump(data, f, indent=2)
os.replace(path + ".new", path)
"""


def _waiters_on(path: Path) -> int:
    """Blocked flock waiters on `path` as the kernel lists them (/proc/locks: '->' lines)."""
    st = path.stat()
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino} "
    with open("/proc/locks") as f:
        return sum(1 for line in f if "->" in line and key in line)


def test_a_write_waiting_for_the_lock_builds_on_what_its_holder_wrote(
    planned: tuple[FileStore, Planner, str, Path],
) -> None:
    """The change is made while this write waits for the plan's lock, after it read the folder
    to warm its index: under the lock it must take the task as the holder left it."""
    _, planner, plan, folder = planned
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        failed: list[BaseException] = []

        def write() -> None:
            try:
                planner.update_task(plan, 3, description="ours")
            except BaseException as e:  # reported by the assertion after the join
                failed.append(e)

        writer = threading.Thread(target=write)
        writer.start()
        wait_until(lambda: _waiters_on(folder / ".lock") > 0, "the write to wait for the plan's lock")
        assert holder.stdin is not None
        holder.stdin.write("go\n")
        holder.stdin.close()
        assert holder.wait(timeout=60) == 0
        writer.join(timeout=60)
        assert not writer.is_alive() and not failed, failed
    finally:
        holder.kill()
        holder.wait()
    kept = json.loads((folder / "task_3.json").read_text())
    assert (kept["subject"], kept["description"]) == ("While you waited", "ours")
