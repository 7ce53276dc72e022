"""Every backend by id, and what a backend holds, read the way each one keeps it.

The core suite runs each behaviour test against every kind in STORE_KINDS (see the
`store` fixture in tests/conftest.py). "Nothing changed" and "what is stored" are asked
of the backend's own storage, not of the planner: the file store's files on disk, the
other stores' records as they export them (store.Copyable, the exact stored documents).
"""

from __future__ import annotations

import contextlib
import json
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.audit import graph_problems, read_tasks
from planning_core.store import Copyable, PlanRecord, PlanStore
from planning_core.stores import MEMORY_URL, open_store
from planning_core.stores.files import FileStore
from planning_core.taskdoc import validated_task
from tests.support.files import edit_task, tree_state
from tests.support.store_urls import opened_store
from tests.support.waits import bound

STORE_KINDS = ("files", "memory", "postgres")

# Where each store made by make_store lives, so that reopened() can open it again.
_URLS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def make_store(kind: str, tmp_path: Path) -> PlanStore:
    """A new, empty, prepared store of that kind (the caller closes it). postgres: a fresh
    database on the tests' throwaway cluster (tests.support.pg); its absence is a failure."""
    if kind == "files":
        url = str(tmp_path / "root")
    elif kind == "memory":
        url = MEMORY_URL
    elif kind == "postgres":
        from tests.support.pg import fresh_database_url

        url = fresh_database_url()
    else:
        raise ValueError(f"unknown store kind {kind!r}; one of {', '.join(STORE_KINDS)}")
    store = open_store(url)
    store.prepare()
    _URLS[store] = url
    return store


@contextlib.contextmanager
def reopened(store: PlanStore) -> Iterator[PlanStore]:
    """The same plans through a new store object, as a restarted server sees them. The
    memory store's plans live in its object only: there it is the same object."""
    url = _URLS[store]
    if url == MEMORY_URL:
        yield store
        return
    yield from opened_store(url)


def _record(store: PlanStore, plan: str) -> PlanRecord:
    assert isinstance(store, Copyable), f"{type(store).__name__} cannot export its plans (store.Copyable)"
    for record in store.export_plans():
        if record.name == plan:
            return record
    raise AssertionError(f"plan {plan} is not stored")


def stored_state(store: PlanStore) -> object:
    """Everything the store holds, to compare before and after a call that must change
    nothing: every file and folder under the root (files), else every plan as exported
    and every plan's version (a refusal must not even look like a write to a watcher)."""
    if isinstance(store, FileStore):
        return tree_state(store.root)
    assert isinstance(store, Copyable), f"{type(store).__name__} cannot export its plans (store.Copyable)"
    plans = {r.name: (r.archived, r.plan_md, r.high_water, dict(r.tasks)) for r in store.export_plans()}
    return plans, store.plan_versions()


def stored_plan(store: PlanStore, plan: str) -> tuple[str, int, dict[int, bytes]]:
    """The plan as stored, wherever it is (active or archived): plan.md, the high-water
    mark and each task's stored document."""
    if isinstance(store, FileStore):
        folder = store.plan_folder(plan)
        docs = {int(p.stem.split("_")[1]): p.read_bytes() for p in folder.glob("task_*.json")}
        return (folder / "plan.md").read_text(), int((folder / ".highwatermark").read_text()), docs
    record = _record(store, plan)
    return record.plan_md, record.high_water, dict(record.tasks)


def stored_tasks(store: PlanStore, plan: str) -> dict[int, dict[str, Any]]:
    """Each task of the plan as stored (its JSON document, parsed), by id."""
    if isinstance(store, FileStore):
        tasks, bad = read_tasks(store.plan_folder(plan))
        assert bad == [], f"unreadable task files {bad}"
        return tasks
    return {i: json.loads(doc) for i, doc in sorted(stored_plan(store, plan)[2].items())}


def assert_mirrored(store: PlanStore, plan: str) -> dict[int, dict[str, Any]]:
    """The stored graph is sound: `blocks` mirrors `blockedBy`, no duplicate, no link to a
    missing task, no cycle. Returns the stored tasks by id."""
    tasks = stored_tasks(store, plan)
    assert graph_problems(tasks) == [], graph_problems(tasks)
    return tasks


def add_extra_fields(store: PlanStore, plan: str, task_id: int, **fields: Any) -> None:
    """Give a stored task fields the contract does not name, the way they reach each
    backend: a hand edit of its file (files), a task stored with them (the others, as
    `planning-mcp copy` brings them)."""
    if isinstance(store, FileStore):
        edit_task(store.plan_folder(plan), task_id, **fields)
        return
    with store.transaction(plan) as txn:
        task = txn.get(task_id)
        txn.put(validated_task(task.model_dump(by_alias=True) | fields))  # as a store reads a document


@contextlib.contextmanager
def plan_held(store: PlanStore, plan: str) -> Iterator[threading.Thread]:
    """Another writer, in a thread, holds `plan`'s transaction (its lock) until the block
    ends; the block starts once it holds it, and is given the holding thread."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.transaction(plan):
            held.set()
            release.wait(bound(30))

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(bound(10))
        yield holder
    finally:
        release.set()
        holder.join(bound(30))
