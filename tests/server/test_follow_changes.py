"""One way to follow a store's changes (server/changes.follow), for the server's notices,
the board's pages and `watch`: the feed's names while it works, then a poll at the given
interval once it fails (the failure told once), until `stop`."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

from planning_core import Planner, StorageError
from planning_core.store import ANY_PLAN
from planning_core.stores.files import FileStore
from planning_core.stores.memory import MemoryStore
from server.common.changes import FEED_SETTLE, PlanChanges, Tick, follow
from tests.support.seed import seed_plan
from tests.support.waits import bound


class FeedThatFails(MemoryStore):
    """A store whose change feed gives one batch, then cannot watch any more (as the file
    store's does when the OS has no watches left)."""

    def changes(self, stop: threading.Event, wait: float) -> Iterator[set[str]]:
        yield {"2026-01-01-a"}
        raise StorageError("watching", "no watches left")


def test_a_failed_feed_is_told_once_then_polled() -> None:
    told: list[StorageError] = []
    stop = threading.Event()
    ticks = follow(FeedThatFails(), stop, feed_wait=1.0, poll_every=0.01, failed=told.append)
    assert next(ticks) == Tick({"2026-01-01-a"}, False)
    assert [next(ticks) for _ in range(3)] == [Tick(set(), True)] * 3
    assert [str(e) for e in told] == [str(StorageError("watching", "no watches left"))]
    ticks.close()
    assert stop.is_set()  # the caller's feed (and anything waiting on it) ends with it


def test_the_file_store_feed_names_the_plan_a_write_changed(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "root")
    planner = Planner(store)
    name = seed_plan(planner)
    stop = threading.Event()
    seen: list[Tick] = []
    ready = threading.Event()

    def run() -> None:
        for tick in follow(store, stop, feed_wait=0.2, poll_every=0.2):
            seen.append(tick)
            ready.set()
            if name in tick.names:
                return

    follower = threading.Thread(target=run, daemon=True)
    follower.start()
    assert ready.wait(bound(30))  # following: the feed's first (timed) answer came
    planner.update_task(name, 3, status="completed")
    follower.join(bound(30))
    stop.set()
    assert not follower.is_alive() and not any(t.polling for t in seen)
    assert name in seen[-1].names


def test_a_version_moved_while_the_feed_was_deaf_is_told_at_its_return() -> None:
    """A change whose notice was lost (the feed's connection was down) only moves a plan
    version: a hint, held FEED_SETTLE. When the feed listens again it yields ANY_PLAN, and
    the moved version is told then, with the plans whose versions did not move left out."""
    store = MemoryStore()
    planner = Planner(store)
    moved, still = seed_plan(planner), seed_plan(planner)
    changes = PlanChanges(store.plan_versions(), FEED_SETTLE)
    planner.update_task(moved, 4, status="completed")
    assert changes.update(set(), store.plan_versions(), 100.0).plans == []  # a hint only
    assert changes.update({ANY_PLAN}, store.plan_versions(), 100.1).plans == [moved]
    assert changes.update({ANY_PLAN}, store.plan_versions(), 100.2).plans == []  # told once
    assert still not in changes.update({ANY_PLAN}, store.plan_versions(), 100.3).plans
    planner.update_task(still, 4, status="completed")
    assert changes.update(set(), store.plan_versions(), 100.4).plans == []  # the rule without it holds
