"""Following a store's changes, once for every follower (the server's notices, the
board's pages, `watch`):

- `follow`: when to look again. From the store's change feed where it has one
  (store.ChangeFeed: the file store's OS watcher, the database's LISTEN/NOTIFY), with the
  names of the plans it saw change; without one, or once it fails, at a fixed interval.
- PlanChanges: which plans changed, by one rule, from the feed's names and the plan
  versions.
- ChangeCounter: one follower for many readers in one process (the board's open pages): a
  counter that moves when a plan may have changed, so that each page compares an integer
  instead of asking the store (a stat per plan, or a database query) several times a
  second. Its follower is a thread (the feed blocks) that runs while someone reads the
  counter or listens (`listening`: a claim that waits is woken by it) and stops
  IDLE_AFTER seconds after the last read with no one listening.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

from planning_core import PlanningError, StorageError
from planning_core.store import ANY_PLAN, ChangeFeed, PlanStore, PlanVersion

log = logging.getLogger(__name__)

POLL_INTERVAL = 0.25  # without a change feed: as the MCP watcher polls
FEED_WAIT = 2.0  # the feed yields at least this often: plan versions are compared then
IDLE_AFTER = 10.0  # seconds without a reader before the follower stops
# While a feed is followed, a plan version that moved with no name from the feed to
# explain it is told once it has differed this long: far longer than a writer's temp file lives.
FEED_SETTLE = 6.0
POLL_SETTLE = 0.0  # polling: told at the look after the one that first saw it moved


class Tick(NamedTuple):
    """A moment to look at the plans again."""

    names: set[str]  # the plans the feed saw change (none: compare the plan versions)
    polling: bool  # no feed (or it failed): the look is a poll's


def _ignore(_: StorageError) -> None:
    return None


def follow(
    store: PlanStore,
    stop: threading.Event,
    *,
    feed_wait: float,
    poll_every: float,
    failed: Callable[[StorageError], None] = _ignore,
) -> Iterator[Tick]:
    """The moments to look again, until `stop` is set or the caller stops asking: from the
    store's change feed where it has one (which yields at least every `feed_wait`), else,
    or once the feed fails (`failed` is told why: no watches left, a file system the OS
    cannot watch, the database gone), every `poll_every`. Blocks: run it in a thread of
    its own, or where waiting is the work (`watch`)."""
    try:
        if isinstance(store, ChangeFeed):
            try:
                for names in store.changes(stop, feed_wait):
                    yield Tick(names, False)
            except StorageError as e:
                failed(e)
        while not stop.is_set():
            time.sleep(poll_every)
            yield Tick(set(), True)
    finally:
        stop.set()  # ends the feed too


class Changed(NamedTuple):
    plans: list[str]  # sorted
    came_or_went: bool  # a plan appeared, went, or moved between active and archived


class PlanChanges:
    """Which plans changed, from the names a change feed gives and the plan versions.

    A name from the feed is a change: the file store names a plan from the paths of its
    committed files (a task file renamed into place, plan.md, the folder itself), the
    database at commit. A version that moved with no name is only a hint: a writer's temp
    file moves its folder's version before the write lands, and the rename that lands it
    is named a moment later, so telling the hint told one change twice, the first time
    before a reader could see it. A hint is told once the version has differed for
    `settle` seconds with no name to explain it (what a feed missed: a change made before
    it began, a notice the database lost; polling, any change, at the next look). A plan
    that came, went or moved between active and archived is told at once: each is one
    rename. After ANY_PLAN (a feed that was deaf and may have missed names) every moved
    version is told at once."""

    def __init__(self, versions: dict[str, PlanVersion], settle: float) -> None:
        self.told = versions  # each plan's version as last told (a hint not yet told keeps the old one)
        self.settle = settle
        self._hints: dict[str, float] = {}  # when each plan's version was first seen moved, unexplained

    def update(self, named: set[str], current: dict[str, PlanVersion], now: float) -> Changed:
        told = self.told
        both = current.keys() & told.keys()
        came_or_went = (current.keys() ^ told.keys()) | {n for n in both if current[n].archived != told[n].archived}
        refresh = ANY_PLAN in named  # the feed was deaf a while: what moved meanwhile is told now
        named = named & current.keys()
        hinted = {n for n in both if current[n] != told[n]} - came_or_went - named
        self._hints = {n: self._hints.get(n, now) for n in hinted}
        settled = {n for n, since in self._hints.items() if refresh or (since < now and now - since >= self.settle)}
        for name in settled:
            del self._hints[name]
        self.told = {**current, **{n: told[n] for n in self._hints}}
        return Changed(sorted(came_or_went | named | settled), bool(came_or_went))


class ChangeCounter:
    def __init__(self, store: PlanStore) -> None:
        self.store = store
        self._count = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._last_read = 0.0
        # Whether the store's change feed is being followed now: every change then moves the
        # counter, a file edited in place too; polling, such an edit moves no plan version.
        self.following = False
        self._listeners: list[Callable[[], None]] = []  # told each time the counter moves
        # Set at the follower's first look after its feed began: a change from then on moves
        # the counter; one made before may have been missed by the feed (not by a look then).
        self.armed = threading.Event()

    def current(self) -> int:
        """The counter now (starting the follower if it is not running)."""
        with self._lock:
            self._last_read = time.monotonic()
            if self._thread is None or not self._thread.is_alive():
                self.following = isinstance(self.store, ChangeFeed)  # from now: the thread begins with it
                self._stop = threading.Event()
                self.armed = threading.Event()
                self._thread = threading.Thread(
                    target=self._follow, args=(self._stop, self.armed), name="plan-changes", daemon=True
                )
                self._thread.start()
            return self._count

    def close(self) -> None:
        self._stop.set()

    @contextmanager
    def listening(self, moved: Callable[[], None]) -> Iterator[None]:
        """`moved` is called (from the follower's thread: it must not block) each time the
        counter moves while the block runs, and once when the follower is `armed` if it was
        not yet (look again then: a change just before may have been missed); the follower
        runs at least that long."""
        with self._lock:
            self._listeners.append(moved)
        try:
            self.current()
            yield
        finally:
            with self._lock:
                self._listeners.remove(moved)
                self._last_read = time.monotonic()

    def _bump(self) -> None:
        with self._lock:
            self._count += 1
        self._tell()

    def _tell(self) -> None:
        with self._lock:
            told = list(self._listeners)
        for moved in told:
            moved()

    def _idle(self, stop: threading.Event) -> bool:
        with self._lock:
            if self._listeners:
                self._last_read = time.monotonic()  # someone waits on it: not idle
            if time.monotonic() - self._last_read > IDLE_AFTER:
                stop.set()  # ends the feed too
                self._thread = None  # the next read starts another
            return stop.is_set()

    def _versions(self) -> dict[str, PlanVersion] | None:
        try:
            return self.store.plan_versions()
        except (OSError, PlanningError):
            return None  # the database away for a moment: compare again later

    def _follow(self, stop: threading.Event, armed: threading.Event) -> None:
        changes = PlanChanges(self._versions() or {}, FEED_SETTLE)
        for tick in follow(self.store, stop, feed_wait=FEED_WAIT, poll_every=POLL_INTERVAL, failed=self._polling):
            if tick.polling:
                changes.settle = POLL_SETTLE
            self._look(changes, tick.names)
            if not armed.is_set():
                armed.set()
                self._tell()
            if self._idle(stop):
                return

    def _polling(self, e: StorageError) -> None:
        self.following = False
        log.warning("cannot follow changes of %s (%s); polling", self.store.describe(), e)

    def _look(self, changes: PlanChanges, names: set[str]) -> None:
        current = self._versions()
        if current is not None and changes.update(names, current, time.monotonic()).plans:
            self._bump()
