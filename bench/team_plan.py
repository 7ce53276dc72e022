"""The team benchmark's plan: a seeded, reproducible dependency graph of layers with
fan-in and fan-out, task durations from a lognormal distribution, the lower bound on any
schedule of it, and the plan written into a store through the seam.

    plan = make_plan(1_000, seed=7)
    plan.durations(k=16, work_seconds=20.0)   # seconds per task id: total work / 16 = 20 s
    plan.bound(durations, k)                  # max(critical path, total work / k)
    seed_team_plan(url, plan)                 # the plan's name in that store
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from planning_core import Task, TaskStatus
from planning_core.stores import open_store

PLAN_DATE, PLAN_SLUG = "2026-01-02", "team"
PLAN_MD = "# Team benchmark plan\n\n## Analysis\n\nSeeded by bench/team.py.\n\n## Approach\n\nN/A\n\n## Steps\n\n"
LAYER_WIDTH = 80  # tasks per layer on average (a 1,000-task plan has ~12 layers)
SIGMA = 0.6  # the lognormal's shape: most tasks short, a few several times the median
LONGEST = 4.0  # no task is longer than this many times the mean (a bounded tail, so a lease can cover it)


@dataclass(frozen=True)
class TeamPlan:
    n: int
    seed: int
    blocked_by: dict[int, list[int]]  # task id -> the ids it waits for
    raw: dict[int, float]  # relative durations (mean 1)
    layers: int

    def blocks(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {i: [] for i in self.blocked_by}
        for i, before in self.blocked_by.items():
            for b in before:
                out[b].append(i)
        return out

    def durations(self, k: int, work_seconds: float) -> dict[int, float]:
        """Seconds per task, scaled so that total work / k is `work_seconds`: every K makes
        about the same number of calls per second, so the machine is as loaded for each."""
        scale = work_seconds * k / sum(self.raw.values())
        return {i: d * scale for i, d in self.raw.items()}

    def critical_path(self, durations: dict[int, float]) -> float:
        finish: dict[int, float] = {}
        for i in sorted(self.blocked_by):  # ids are in layer order: blockers come first
            finish[i] = durations[i] + max((finish[b] for b in self.blocked_by[i]), default=0.0)
        return max(finish.values(), default=0.0)

    def bound(self, durations: dict[int, float], k: int) -> float:
        """No schedule of k agents is shorter than this."""
        return max(self.critical_path(durations), sum(durations.values()) / k)

    def tail(self) -> dict[int, int]:
        """Per task, the longest chain of tasks waiting behind it (the new way's tie-break)."""
        below = self.blocks()
        depth: dict[int, int] = {}
        for i in sorted(self.blocked_by, reverse=True):
            depth[i] = max((1 + depth[d] for d in below[i]), default=0)
        return depth


def _layer_sizes(n: int, rng: random.Random) -> list[int]:
    width = min(LAYER_WIDTH, max(4, n // 5))  # a small plan still has layers
    sizes: list[int] = []
    while sum(sizes) < n:
        sizes.append(max(2, int(rng.gauss(width, width / 3))))
    sizes[-1] -= sum(sizes) - n
    return [s for s in sizes if s > 0]


def _blockers(rng: random.Random, earlier: list[list[int]], hubs: list[int]) -> list[int]:
    """Fan-in: 1 to 4 blockers, mostly from the layer just before, sometimes from older
    layers, and often a hub (a task many others wait for: fan-out)."""
    fan_in = min(4, 1 + int(rng.expovariate(0.9)))
    chosen = set(rng.sample(earlier[-1], min(fan_in, len(earlier[-1]))))
    if len(earlier) > 1 and rng.random() < 0.3:
        chosen.add(rng.choice(rng.choice(earlier[:-1])))
    if hubs and rng.random() < 0.25:
        chosen.add(rng.choice(hubs))
    return sorted(chosen)


def make_plan(n: int, seed: int) -> TeamPlan:
    rng = random.Random(seed)
    blocked_by: dict[int, list[int]] = {}
    layers: list[list[int]] = []
    hubs: list[int] = []
    next_id = 1
    for size in _layer_sizes(n, rng):
        layer = list(range(next_id, next_id + size))
        next_id += size
        for i in layer:
            # A few tasks in every layer stand alone (docs, chores): ready from the start.
            free = not layers or rng.random() < 0.05
            blocked_by[i] = [] if free else _blockers(rng, layers, hubs)
        hubs = [*hubs[-6:], *rng.sample(layer, min(2, len(layer)))]
        layers.append(layer)
    mu = -SIGMA * SIGMA / 2  # mean exp(mu + sigma²/2) = 1
    raw = {i: min(LONGEST, rng.lognormvariate(mu, SIGMA)) for i in blocked_by}
    mean = sum(raw.values()) / len(raw)
    return TeamPlan(n, seed, blocked_by, {i: d / mean for i, d in raw.items()}, len(layers))


# Seconds: on a loaded machine a renewal or a completion can wait seconds for the plan's lock.
LEASE_FLOOR = 4
HEARTBEAT = 1.0  # seconds between an agent's lease renewals while it works (0: none)


def lease_for(durations: dict[int, float], floor: int = LEASE_FLOOR, heartbeat: float = HEARTBEAT) -> int:
    """A lease no live agent's quiet spell outlasts (twice the longest: a task, or the time
    between two renewals where the agent renews, and time for the calls around it), in whole
    seconds as the server takes it. A dead agent's task waits this long to be taken over."""
    longest = max(durations.values())
    spell = min(longest, heartbeat) if heartbeat > 0 else longest
    return max(floor, math.ceil(2 * spell + 1))


def seed_team_plan(url: str, plan: TeamPlan) -> str:
    """The plan, every task pending, in the store `url` names (one create through the seam)."""
    now = "2026-01-02T00:00:00Z"
    below = plan.blocks()
    tasks = [
        Task(
            id=i,
            subject=f"Team task {i}",
            description=f"Team benchmark task {i}.",
            status=TaskStatus.PENDING,
            blocked_by=plan.blocked_by[i],
            blocks=below[i],
            created_at=now,
            updated_at=now,
        )
        for i in sorted(plan.blocked_by)
    ]
    store = open_store(url)
    try:
        store.prepare()
        return store.create_plan(PLAN_DATE, PLAN_SLUG, PLAN_MD, tasks)
    finally:
        store.close()
