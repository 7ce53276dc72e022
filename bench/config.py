"""How much work a benchmark run does: the full run and the quick smoke run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Boards:
    """Open board pages beside the tools (bench/board_streams.py; run with --boards)."""

    streams: int  # GET /board/events sent at once (more than the server admits)
    tasks: int
    calls: int  # TaskList calls per series
    quiet: float  # seconds the idle CPU is read over


@dataclass(frozen=True)
class Config:
    sizes: tuple[int, ...]  # tasks in the plan, one fresh server per size
    calls: int  # calls per operation per size
    startup_reps: int
    writers: tuple[int, ...]  # K values for the shared-writers runs
    per_writer: int  # creates per writer
    peer_target: int  # tasks a peer's list should grow to
    peer_budget: float  # seconds a peer may spend growing its task list
    peer_calls: int
    peer_writer_tasks: int  # creates per writer in the two-writer peer comparison
    idle_seconds: float  # how long the idle-CPU figure watches a server with 20 plans
    notice_writes: int  # writes by another process timed to their resources/updated notice
    boards: Boards


# Each setting's value in the full run and in the quick one, side by side.
_SETTINGS: dict[str, tuple[Any, Any]] = {
    "sizes": ((10, 100, 1_000, 10_000), (10, 1_000)),
    "calls": (200, 20),
    "startup_reps": (10, 2),
    "writers": ((1, 2, 4, 8), (1, 2)),
    "per_writer": (50, 10),
    "peer_target": (1_000, 50),
    "peer_budget": (60.0, 10.0),
    "peer_calls": (200, 20),
    "peer_writer_tasks": (25, 10),
    "idle_seconds": (60.0, 5.0),
    "notice_writes": (20, 5),
    "boards": (
        Boards(streams=150, tasks=2_000, calls=40, quiet=20.0),
        Boards(streams=80, tasks=200, calls=10, quiet=2.0),
    ),
}
FULL = Config(**{name: full for name, (full, _) in _SETTINGS.items()})
QUICK = Config(**{name: quick for name, (_, quick) in _SETTINGS.items()})


# The task every server is filled with, ours and the peers' (through their own tools):
# the same subject and description, nothing else.
def subject(i: int) -> str:
    return f"Task {i}"


def description(i: int) -> str:
    return f"Benchmark task number {i}: implement and test item {i}."
