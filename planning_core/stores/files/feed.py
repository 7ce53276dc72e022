"""The file store's change feed: which plans changed, from the OS's file events.

On Linux it is an inotify instance of its own (fswatch.Watcher) on exactly the folders a
plan lives in: the root, todo/ and done/, and each plan folder in them. A plan folder is
never watched through a symbolic link: a repository controls `.planning`, and a link planted
as a plan folder (`todo/x -> /`) must not make the server watch, and walk, whatever it
points to (a recursive watcher that follows links spends every inotify watch the user has
on it, and with them every other program's file events). The root and its two areas are
the store's own (a root may be a link to where the user keeps plans, as the store itself
allows) and are watched where they lead: three watches, not a walk. A plan folder that comes (a new plan,
an archive's move to done/) is watched when its name is seen; one that goes is dropped by
the kernel. A plan is named for what the store's own paths say (store.plans_of): its
folder, its plan.md, a task file; the history log, locks and temp files wake the feed but
name nothing; so does a change of a file's mode. A root removed (and made again) is waited
for and watched afresh.

Where there is no inotify (macOS) `watchfiles` reports the events, from FSEvents, which
follows no link into another tree.

One write's events (temp file, rename, history, folder fsync) are one burst: the burst is
over after store.BURST_QUIET s with no event, or BURST_MAX s after its first.
"""

from __future__ import annotations

import errno
import os
import select
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol

from ...errors import PlanningError, StorageError
from ...names import check_plan_name
from ...store import ANY_PLAN, BURST_MAX, BURST_QUIET
from . import fswatch
from .layout import is_real_dir
from .plainread import list_plans

STOP_POLL = 0.25  # seconds: how often a quiet wait looks at `stop`
ROOT_LOOK_S = 0.5  # how often the feed looks for a root not made yet (one stat)
# watchfiles' burst, in its milliseconds
_STEP_MS = round(BURST_QUIET * 1000)
_DEBOUNCE_MS = round(BURST_MAX * 1000)


class Layout(Protocol):
    """The store's folders, and which plans a path names (FileStore)."""

    root: Path
    todo: Path
    done: Path

    def plans_of(self, paths: Iterable[str]) -> set[str]: ...


def changes(layout: Layout, stop: threading.Event, wait: float) -> Iterator[set[str]]:
    """Names of plans that may have changed under the layout's root, a burst at a time;
    an empty set after `wait` s without a change. Ends when `stop` is set. StorageError
    when the folders cannot be watched (no inotify instance or watch left): the caller
    polls instead."""
    while not stop.is_set():
        yield from _root_made(layout.root, stop, wait)
        if stop.is_set():
            return
        if not fswatch.available():
            yield from _watchfiles_changes(layout, stop, wait)
            return
        yield from _inotify_changes(layout, stop, wait)  # ends when the root went


def _root_made(root: Path, stop: threading.Event, wait: float) -> Iterator[set[str]]:
    """A root not made yet (prepare leaves that to the first plan) cannot be watched: look
    for it, a stat every ROOT_LOOK_S, an empty set every `wait` s and once it is there."""
    waited = 0.0
    while not os.path.isdir(root):
        if stop.wait(ROOT_LOOK_S):
            return
        waited += ROOT_LOOK_S
        if waited >= wait or os.path.isdir(root):
            waited = 0.0
            yield set()


class _Folders:
    """What one inotify instance watches: the root, its two plan areas, their plan folders."""

    def __init__(self, layout: Layout) -> None:
        self.watcher = fswatch.Watcher(fswatch.CONTENT_CHANGES)
        if not self.watcher.available:
            raise StorageError(f"watching {layout.root}", "no inotify instance left")
        self.root = layout.root
        self.areas = (layout.todo, layout.done)
        self.plans_of = layout.plans_of
        self.root_gone = False
        if not self._watch(self.root, follow=True):
            if os.path.isdir(self.root):  # there, and not ours to watch (a refusal, not a race)
                raise StorageError(f"watching {self.root}", os.strerror(self.watcher.refused))
            self.root_gone = True  # removed meanwhile: wait for it again
        for area in self.areas:
            self._watch_area(area)

    def close(self) -> None:
        self.watcher.close()

    def _watch(self, folder: Path, *, follow: bool = False) -> bool:
        """Watch `folder` if it is a folder (through a link only where `follow`: the root
        and its areas). No inotify watch left is the end of the feed (StorageError: the
        caller polls); any other refusal skips this folder."""
        if self.watcher.watch(folder, follow=follow):
            return True
        if self.watcher.refused == errno.ENOSPC:
            raise StorageError(f"watching {folder}", "no inotify watch left (fs.inotify.max_user_watches)")
        return False  # gone meanwhile, a link or file where a folder was, or not ours to read

    def _watch_area(self, area: Path) -> set[str]:
        """Watch todo/ or done/ and every plan folder in it; the plans found."""
        if not self._watch(area, follow=True):
            return set()
        found = set(list_plans(area))  # real folders with a plan's name only
        for name in found:
            self._watch(area / name)
        return found

    def names(self, drained: dict[Path, set[str]]) -> set[str]:
        """The plans the drained events name; plan folders (and areas) that came are
        watched now, and whatever they hold is named."""
        named: set[str] = set()
        for folder, files in drained.items():
            if folder == fswatch.OVERFLOW:  # events were lost: any plan may have changed, or come
                named.add(ANY_PLAN)
                for area in self.areas:
                    self._watch_area(area)
            elif folder == self.root:
                named |= self._root_changed(files)
                self.root_gone = self.root_gone or fswatch.GONE in files
            elif folder in self.areas:
                named |= self._area_changed(folder, files)
            else:
                named |= self._plan_changed(folder, files)
        return named

    def _root_changed(self, files: set[str]) -> set[str]:
        named: set[str] = set()
        for area in self.areas:
            if area.name in files:  # made (the first plan), or moved or removed by hand
                named |= self._watch_area(area) | {ANY_PLAN}
        return named

    def _plan_changed(self, folder: Path, files: set[str]) -> set[str]:
        if fswatch.GONE in files:  # moved (archived) or removed: the area's event watches where it went
            return {folder.name}
        return self.plans_of(str(folder / f) for f in files)

    def _area_changed(self, area: Path, files: set[str]) -> set[str]:
        if fswatch.GONE in files:  # todo/ or done/ itself went: the root's event watches its successor
            return {ANY_PLAN}
        named = self.plans_of(str(area / f) for f in files)
        for name in named:
            if _is_plan_name(name) and is_real_dir(str(area / name)):
                self._watch(area / name)
        return named


def _is_plan_name(name: str) -> bool:
    try:
        check_plan_name(name)
    except PlanningError:
        return False
    return True


def _readable(fd: int, timeout: float) -> bool:
    # poll, not select: a server with many connections may have descriptors past select's 1,024
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(max(0, round(timeout * 1000))))


def _inotify_changes(layout: Layout, stop: threading.Event, wait: float) -> Iterator[set[str]]:
    folders = _Folders(layout)
    try:
        while not stop.is_set() and not folders.root_gone:
            deadline = time.monotonic() + wait
            while not stop.is_set() and (left := deadline - time.monotonic()) > 0:
                if _readable(folders.watcher.fd, min(left, STOP_POLL)):
                    break
            else:
                if not stop.is_set():
                    yield set()
                continue
            yield _burst(folders, stop)
    finally:
        folders.close()


def _burst(folders: _Folders, stop: threading.Event) -> set[str]:
    """The plans named by a burst of events: the first, then more until BURST_QUIET s pass
    with none, at most BURST_MAX s after the first. Drained once a step, not per event."""
    named = folders.names(folders.watcher.drain())
    end = time.monotonic() + BURST_MAX
    while (left := end - time.monotonic()) > 0 and not stop.wait(min(left, BURST_QUIET)):
        more = folders.watcher.drain()
        if not more:
            break
        named |= folders.names(more)
    return named


def _watchfiles_changes(layout: Layout, stop: threading.Event, wait: float) -> Iterator[set[str]]:
    from watchfiles import watch  # imported here: Linux and pollers need nothing of it

    try:
        for batch in watch(
            layout.root,
            watch_filter=None,
            debounce=_DEBOUNCE_MS,
            step=_STEP_MS,
            rust_timeout=int(wait * 1000),
            yield_on_timeout=True,
            stop_event=stop,
            recursive=True,
            ignore_permission_denied=True,
        ):
            yield layout.plans_of(path for _, path in batch)
    except (OSError, RuntimeError) as e:  # no watches left, a file system the OS cannot watch
        raise StorageError(f"watching {layout.root}", str(e)) from None
