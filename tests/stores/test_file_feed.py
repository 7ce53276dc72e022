"""The file store's change feed (planning_core/stores/files/feed.py): which plans a write,
a new plan, an archive or a hand edit changed, from the OS's file events; never a watch
through a link a repository planted; lost events told as ANY_PLAN."""

from __future__ import annotations

import itertools
import os
import queue
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from planning_core import Planner
from planning_core.store import ANY_PLAN
from planning_core.stores.files import FileStore, feed, fswatch
from tests.support.seed import seed_plan
from tests.support.waits import bound

WAIT = 0.2  # the feed's quiet yield: an empty set this often while nothing changes

pytestmark = pytest.mark.skipif(not fswatch.available(), reason="inotify is Linux's")


class Following:
    """The feed of a store, run in a thread as the server runs it; what it named, in order."""

    def __init__(self, store: FileStore) -> None:
        self.store = store
        self.stop = threading.Event()
        self.ticks: queue.Queue[set[str] | BaseException] = queue.Queue()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            for names in feed.changes(self.store, self.stop, WAIT):
                self.ticks.put(names)
        except BaseException as e:  # the test reads it
            self.ticks.put(e)

    def next(self) -> set[str]:
        tick = self.ticks.get(timeout=bound(30))
        if isinstance(tick, BaseException):
            raise tick
        return tick

    def quiet(self) -> None:
        """Wait for a quiet tick: the feed is watching, and what came before is told."""
        deadline = time.monotonic() + bound(30)
        while self.next():
            assert time.monotonic() < deadline, "the feed never went quiet"

    def until_named(self, name: str, within: float | None = None) -> set[str]:
        """Every name told until `name` was (within the bound, or `within` s: then maybe
        without it)."""
        deadline = time.monotonic() + (bound(30) if within is None else within)
        seen: set[str] = set()
        while name not in seen:
            if time.monotonic() >= deadline:
                assert within is not None, f"{name} was never named; named: {sorted(seen)}"
                break
            seen |= self.next()
        return seen


@contextmanager
def following(store: FileStore) -> Iterator[Following]:
    f = Following(store)
    f.thread.start()
    try:
        yield f
    finally:
        f.stop.set()
        f.thread.join(bound(10))
        assert not f.thread.is_alive(), "the feed did not end when told to stop"


def inotify_watches() -> int:
    """The inotify watches this process holds, all instances (from /proc/self/fdinfo)."""
    total = 0
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            total += Path(f"/proc/self/fdinfo/{fd}").read_text().count("inotify wd:")
        except OSError:
            continue
    return total


@pytest.mark.parametrize("way", ["inotify", "watchfiles", "a root through a link"])
def test_a_write_to_a_plan_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str) -> None:
    """Where the system has no inotify (macOS) the feed is watchfiles' (FSEvents there); it
    is run here on Linux's events too. A root may be a link to where the user keeps plans
    (the store allows it): the root and its areas are watched where they lead."""
    if way == "watchfiles":
        monkeypatch.setattr(fswatch, "available", lambda: False)
    root = tmp_path / "root"
    if way == "a root through a link":
        (tmp_path / "kept").mkdir()
        root.symlink_to(tmp_path / "kept", target_is_directory=True)
    store = FileStore(root)
    planner = Planner(store)
    name = seed_plan(planner)
    with following(store) as f:
        f.quiet()
        planner.update_task(name, 3, status="completed")
        assert name in f.until_named(name)


def test_a_plan_made_after_the_feed_began_is_followed_into_done(tmp_path: Path) -> None:
    """A new plan's folder is watched when its name is seen, and again where an archive
    moved it: a hand edit of a task file inside each is named."""
    store = FileStore(tmp_path / "root")
    planner = Planner(store)
    store.make_layout()
    with following(store) as f:
        f.quiet()
        name = seed_plan(planner, in_progress=False)
        f.until_named(name)
        f.quiet()
        task = store.todo / name / "task_4.json"
        task.write_text(task.read_text().replace('"pending"', '"in_progress"'))
        f.until_named(name)
        for n in (3, 4):
            planner.update_task(name, n, status="completed")
        planner.archive(name)
        f.until_named(name)
        f.quiet()
        (store.done / name / "plan.md").write_text("# Renamed by hand\n")
        assert name in f.until_named(name)


def test_a_root_made_after_the_feed_began_is_watched(tmp_path: Path) -> None:
    """A plan made before the watch began is the caller's to find (it compares versions at
    every tick); from then on each write is named."""
    store = FileStore(tmp_path / "root")
    planner = Planner(store)
    with following(store) as f:
        f.next()  # a quiet tick while there is no root
        name = seed_plan(planner)
        deadline = time.monotonic() + bound(30)
        for edit in itertools.count():
            planner.update_task(name, 4, description=f"edit {edit}")
            if name in f.until_named(name, within=1.0):
                break
            assert time.monotonic() < deadline, "no write to the plan was ever named"


def test_a_link_planted_as_a_plan_folder_is_never_watched_through(tmp_path: Path) -> None:
    """A repository controls `.planning`: `todo/<plan> -> <a big tree>` must not make the
    feed watch (and walk) the tree, spending the user's inotify watches. Only the real
    folders are watched: the root, todo/, done/ and the real plan's folder."""
    tree = tmp_path / "elsewhere"
    for i in range(60):
        (tree / f"d{i}" / "sub").mkdir(parents=True)
    store = FileStore(tmp_path / "root")
    planner = Planner(store)
    name = seed_plan(planner)
    (store.todo / "2026-01-01-planted").symlink_to(tree, target_is_directory=True)
    before = inotify_watches()
    with following(store) as f:
        f.quiet()
        assert inotify_watches() - before == 4
        (tree / "d0" / "task_1.json").write_text("{}")  # a change in the tree names nothing
        planner.update_task(name, 3, status="completed")
        assert "2026-01-01-planted" not in f.until_named(name)
        assert inotify_watches() - before == 4


def edit_by_hand(store: FileStore, name: str, task_id: int = 4) -> None:
    """A task file edited in place, as an editor saves it (no folder version moves)."""
    task = store.todo / name / f"task_{task_id}.json"
    task.write_text(task.read_text().replace('"subject": "', '"subject": "Edited: ', 1))


def test_a_plan_folder_removed_and_made_again_is_watched_again(tmp_path: Path) -> None:
    """The old folder's removal can be read late (a process still holds it open, so the
    kernel tells its removal only when that hold goes): the folder made again under the same
    name is another folder and must be watched for itself."""
    store = FileStore(tmp_path / "root")
    planner = Planner(store)
    name = seed_plan(planner)
    kept = tmp_path / "kept"
    shutil.copytree(store.todo / name, kept)
    with following(store) as f:
        f.quiet()
        held = os.open(store.todo / name, os.O_RDONLY)
        try:
            shutil.rmtree(store.todo / name)
            shutil.copytree(kept, store.todo / name)
            f.until_named(name)
            f.quiet()
        finally:
            os.close(held)  # the old folder's removal is told now, after the new one is watched
        f.quiet()
        edit_by_hand(store, name)
        assert name in f.until_named(name)


def test_a_root_removed_and_made_again_is_watched_again(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "root")
    planner = Planner(store)
    seed_plan(planner)
    with following(store) as f:
        f.quiet()
        shutil.rmtree(store.root)
        assert ANY_PLAN in f.until_named(ANY_PLAN)
        name = seed_plan(planner)
        deadline = time.monotonic() + bound(30)
        for edit in itertools.count():  # the plan may come before the new root's watch
            planner.update_task(name, 4, description=f"edit {edit}")
            if name in f.until_named(name, within=1.0):
                break
            assert time.monotonic() < deadline, "no write to the plan in the new root was ever named"


def test_a_file_emptied_in_place_is_named(tmp_path: Path) -> None:
    """A change not followed by a close (truncate(2), a writer holding the file open) is
    named too."""
    store = FileStore(tmp_path / "root")
    planner = Planner(store)
    name = seed_plan(planner)
    with following(store) as f:
        f.quiet()
        os.truncate(store.todo / name / "task_4.json", 0)
        assert name in f.until_named(name)


def test_a_link_planted_while_the_feed_runs_is_never_watched_through(tmp_path: Path) -> None:
    tree = tmp_path / "elsewhere"
    for i in range(20):
        (tree / f"d{i}").mkdir(parents=True)
    store = FileStore(tmp_path / "root")
    planner = Planner(store)
    name = seed_plan(planner)
    with following(store) as f:
        f.quiet()
        before = inotify_watches()
        (store.todo / "2026-01-01-planted").symlink_to(tree, target_is_directory=True)
        (store.todo / "2026-01-02-also-planted").mkdir()  # a real plan folder that came: watched
        f.until_named("2026-01-02-also-planted")
        assert inotify_watches() - before == 1
        planner.update_task(name, 3, status="completed")
        f.until_named(name)
        assert inotify_watches() - before == 1


def test_lost_events_are_told_as_any_plan(tmp_path: Path) -> None:
    """More events than the kernel queues while the feed is busy elsewhere: the overflow is
    told as ANY_PLAN (the caller then compares every plan's version), and the feed goes on."""
    store = FileStore(tmp_path / "root")
    planner = Planner(store)
    name = seed_plan(planner)
    queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    stop = threading.Event()
    changes = feed.changes(store, stop, WAIT)
    try:
        assert next(changes) == set()  # watching, nothing changed
        # Two files in turn: the kernel folds an event equal to the one before it into it.
        tasks = [store.todo / name / "task_1.json", store.todo / name / "task_2.json"]
        for i in range(queued + 100):  # queued while nobody drains: opened to write, closed unchanged
            os.close(os.open(tasks[i % 2], os.O_WRONLY))
        assert ANY_PLAN in next(changes)
        planner.update_task(name, 3, status="completed")
        told: set[str] = set()
        for _ in range(int(bound(30) / WAIT)):  # the feed goes on: the next write is named
            told |= next(changes)
            if name in told:
                break
        assert name in told
    finally:
        stop.set()
        changes.close()
