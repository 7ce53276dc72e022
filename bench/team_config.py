"""The team benchmark's settings (bench.team runs them; bench.team_report describes them)."""

from __future__ import annotations

from dataclasses import dataclass

from bench.team_agents import WAYS
from bench.team_plan import HEARTBEAT, LEASE_FLOOR

STORES = ("file", "pg")


@dataclass(frozen=True)
class TeamConfig:
    ks: tuple[int, ...] = (1, 4, 16, 32)
    tasks: int = 1_000
    work_seconds: float = 30.0  # total work / K, per run (durations are scaled per K)
    kill_every: float = 3.0  # seconds between kills, ±30 %
    stores: tuple[str, ...] = STORES
    ways: tuple[str, ...] = WAYS
    seed: int = 7
    lease_floor: int = LEASE_FLOOR  # the shortest lease taken (seconds)
    heartbeat: float = HEARTBEAT  # seconds between lease renewals while an agent works (0: none)
    deadline: float = 1_500.0  # seconds for everything; runs not started by then are reported as not run
    run_seconds: float = 0.0  # a run not done by then is stopped and reported unfinished (0: from work_seconds)
    save: str = ""  # a JSON-lines file each run's result is appended to as it ends (--render reads it)

    def run_timeout(self) -> float:
        return self.run_seconds or 6 * self.work_seconds + 60


TEAM_QUICK = TeamConfig(
    ks=(2, 4), tasks=80, work_seconds=3.0, kill_every=2.0, stores=("file",), lease_floor=3, deadline=120.0
)
TEAM_IN_FULL_RUN = TeamConfig(ks=(16,), work_seconds=20.0, deadline=600.0)  # bench.run: the K the targets are set at
TEAM_IN_QUICK_RUN = TeamConfig(
    ks=(2,), tasks=20, work_seconds=2.0, kill_every=3.0, stores=("file",), lease_floor=2, deadline=60.0
)
