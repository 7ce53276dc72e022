"""How much work a benchmark run does: the full run and the quick smoke run."""

from __future__ import annotations

from dataclasses import dataclass


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


FULL = Config(
    sizes=(10, 100, 1_000, 10_000),
    calls=200,
    startup_reps=10,
    writers=(1, 2, 4, 8),
    per_writer=50,
    peer_target=1_000,
    peer_budget=60.0,
    peer_calls=200,
    peer_writer_tasks=25,
    idle_seconds=60.0,
    notice_writes=20,
    boards=Boards(streams=150, tasks=2_000, calls=40, quiet=20.0),
)
QUICK = Config(
    sizes=(10, 1_000),
    calls=20,
    startup_reps=2,
    writers=(1, 2),
    per_writer=10,
    peer_target=50,
    peer_budget=10.0,
    peer_calls=20,
    peer_writer_tasks=10,
    idle_seconds=5.0,
    notice_writes=5,
    boards=Boards(streams=80, tasks=200, calls=10, quiet=2.0),
)


# The task every server is filled with, ours and the peers' (through their own tools):
# the same subject and description, nothing else.
def subject(i: int) -> str:
    return f"Task {i}"


def description(i: int) -> str:
    return f"Benchmark task number {i}: implement and test item {i}."
