"""A plan's ranking is kept from one version to the next: a later version with a few tasks
changed (claims, completions, leases, priorities, reopened tasks, gates) is ranked from the
kept one, and gives exactly the order and chains that ranking the version anew gives; a
version with a link, a task added or removed, or an unreadable task is ranked anew."""

from __future__ import annotations

import random
from typing import Any

from planning_core.models import CorruptFile, PlanSnapshot, Task, TaskStatus
from planning_core.taskgraph import ranking

NOW = "2026-01-02T00:00:00Z"
LEASE_END = "2026-01-02T00:10:00Z"


def _plan(n: int, rng: random.Random) -> dict[int, Task]:
    tasks: dict[int, Task] = {}
    for i in range(1, n + 1):
        before = sorted(rng.sample(range(1, i), min(i - 1, rng.randint(0, 3)))) if i > 1 else []
        tasks[i] = Task(id=i, subject=f"task {i}", status=TaskStatus.PENDING, blocked_by=before)
    return tasks


def _changed(task: Task, rng: random.Random) -> Task:
    """The task after one change an agent or a person makes (links apart)."""
    kinds: list[dict[str, Any]] = [
        {"status": TaskStatus.IN_PROGRESS, "owner": "a", "lease_seconds": 10, "lease_expires_at": LEASE_END},
        {"status": TaskStatus.IN_PROGRESS, "owner": "b", "lease_seconds": 0, "lease_expires_at": ""},
        {"status": TaskStatus.COMPLETED, "lease_seconds": 0, "lease_expires_at": ""},
        {"status": TaskStatus.PENDING, "owner": "", "lease_seconds": 0, "lease_expires_at": ""},
        {"priority": rng.choice([None, 0, 1, 2, 3, 4])},
        {"gate": rng.choice([None, "human"])},
    ]
    return task.model_copy(update=rng.choice(kinds))


def _next_version(snap: PlanSnapshot, rng: random.Random, step: int) -> PlanSnapshot:
    """The plan after a few changes; the tasks not changed are the same objects, as a view
    shares the tasks it did not read again."""
    tasks = dict(snap.tasks)
    corrupt: list[CorruptFile] = []
    roll = rng.random()
    if roll < 0.03:
        i = rng.choice(list(tasks))
        others = [b for b in tasks if b < i and b not in tasks[i].blocked_by]
        if others:  # a new link (to an earlier task: no cycle)
            tasks[i] = tasks[i].model_copy(update={"blocked_by": [*tasks[i].blocked_by, rng.choice(others)]})
    elif roll < 0.05:
        tasks.pop(rng.choice(list(tasks)))
    elif roll < 0.07:
        new_id = max(tasks) + 1
        tasks[new_id] = Task(id=new_id, subject=f"task {new_id}", blocked_by=[rng.choice(list(tasks))])
    elif roll < 0.08:
        corrupt = [CorruptFile(file=f"task-{step}.json", task_id=rng.choice(list(tasks)), reason="unreadable")]
    else:
        for i in rng.sample(list(tasks), rng.choice([1, 1, 1, 2, 5])):
            tasks[i] = _changed(tasks[i], rng)
    return PlanSnapshot(name="kept", title="Kept", tasks=tasks, corrupt=corrupt)


def _as_ranked_anew(snap: PlanSnapshot) -> None:
    kept = ranking.KEPT_RANKS.of(snap)
    anew = ranking.ranked(snap)
    assert [t.id for t in kept.order] == [t.id for t in anew.order]
    assert all(a is b for a, b in zip(kept.order, anew.order, strict=True)), "a ranked task is not the version's own"
    assert kept.chains == anew.chains


def test_each_version_ranks_as_ranking_it_anew_does() -> None:
    rng = random.Random(5)
    snap = PlanSnapshot(name="kept", title="Kept", tasks=_plan(120, rng))
    _as_ranked_anew(snap)
    for step in range(600):
        snap = _next_version(snap, rng, step)
        _as_ranked_anew(snap)


def test_a_plan_with_a_cycle_ranks_as_ranking_it_anew_does() -> None:
    rng = random.Random(9)
    tasks = _plan(40, rng)
    tasks[3] = tasks[3].model_copy(update={"blocked_by": [5]})  # 3 waits for 5, which waits for 3 (or its chain)
    tasks[5] = tasks[5].model_copy(update={"blocked_by": [3]})
    snap = PlanSnapshot(name="kept", title="Kept", tasks=tasks)
    _as_ranked_anew(snap)
    for step in range(200):
        snap = _next_version(snap, rng, step)
        _as_ranked_anew(snap)
