"""The Active Plans block (exact): a line per active plan, from plain values, so that both
readers of plans make it alike: the server's (render.py, from a PlanSummary) and the Claude
Code hook's plain read (no models loaded at every prompt). No pydantic here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from .safetext import escape

ACTIVE_PLANS_HEADER = "# Active Plans"


def progress_text(completed: int, total: int) -> str:
    return f"[{completed}/{total} done]"


class PlanLine(NamedTuple):
    """What a plan's line shows."""

    name: str
    completed: int
    total: int  # readable and unreadable tasks
    current: str | None  # the subject of the lowest-numbered task in progress


def line_text(plan: PlanLine) -> str:
    """`<name> [k/n done] current: "<subject>"` (exact)."""
    line = f"{plan.name} {progress_text(plan.completed, plan.total)}"
    if plan.current is not None:
        line += f' current: "{escape(plan.current)}"'
    return line


def block_text(lines: Iterable[str]) -> str:
    """The block of these plan lines, oldest plan first (`(none)` without any)."""
    shown = [f"- {line}" for line in lines]
    return "\n".join([ACTIVE_PLANS_HEADER, *(shown or ["(none)"])])
