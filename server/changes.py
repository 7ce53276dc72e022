"""One follower of a store's changes for many readers in one process (the board's open
pages): a counter that moves when a plan may have changed, so that each page compares an
integer instead of asking the store (a stat per plan, or a database query) several times
a second.

The follower is a thread: the store's change feed blocks (store.ChangeFeed), and without
one (or when it fails) the thread polls plan versions every POLL_INTERVAL. It runs while
someone reads the counter and stops IDLE_AFTER seconds after the last read.
"""

from __future__ import annotations

import logging
import threading
import time

from planning_core import PlanningError, StorageError
from planning_core.store import ChangeFeed, PlanStore, PlanVersion

log = logging.getLogger(__name__)

POLL_INTERVAL = 0.25  # without a change feed: as the MCP watcher polls
FEED_WAIT = 2.0  # the feed yields at least this often: plan versions are compared then
IDLE_AFTER = 10.0  # seconds without a reader before the follower stops


class ChangeCounter:
    def __init__(self, store: PlanStore) -> None:
        self.store = store
        self._count = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._last_read = 0.0

    def current(self) -> int:
        """The counter now (starting the follower if it is not running)."""
        with self._lock:
            self._last_read = time.monotonic()
            if self._thread is None or not self._thread.is_alive():
                self._stop = threading.Event()
                self._thread = threading.Thread(
                    target=self._follow, args=(self._stop,), name="plan-changes", daemon=True
                )
                self._thread.start()
            return self._count

    def close(self) -> None:
        self._stop.set()

    def _bump(self) -> None:
        with self._lock:
            self._count += 1

    def _idle(self, stop: threading.Event) -> bool:
        with self._lock:
            if time.monotonic() - self._last_read > IDLE_AFTER:
                stop.set()  # ends the feed too
                self._thread = None  # the next read starts another
            return stop.is_set()

    def _versions(self) -> dict[str, PlanVersion] | None:
        try:
            return self.store.plan_versions()
        except (OSError, PlanningError):
            return None  # the database away for a moment: compare again later

    def _follow(self, stop: threading.Event) -> None:
        versions = self._versions()
        if isinstance(self.store, ChangeFeed):
            try:
                for names in self.store.changes(stop, FEED_WAIT):
                    current = self._versions()
                    if names or current != versions:
                        versions = current
                        self._bump()
                    if self._idle(stop):
                        return
            except StorageError as e:
                log.warning("cannot follow changes of %s (%s); polling", self.store.describe(), e)
        while not self._idle(stop):
            time.sleep(POLL_INTERVAL)
            current = self._versions()
            if current != versions:
                versions = current
                self._bump()
