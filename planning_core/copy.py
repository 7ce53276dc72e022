"""Copying every plan from one store to another (`planning-mcp copy`), through the
optional `Copyable` ability of both stores.

Each plan is copied whole or not at all, and is never overwritten: a plan whose name is
free in the target is copied; one stored there exactly so is left alone (so a second run
changes nothing); one whose name is taken by a different plan (other tasks, another
high-water mark, or active on one side and archived on the other) is refused and the
target's plan stays as it was. The copy goes on with the next plan either way, so one
refusal does not hide the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from .errors import PlanExists, PlanningError
from .store import Copyable, PlanStore


class CopyOutcome(Enum):
    COPIED = "copied"
    IDENTICAL = "unchanged"
    REFUSED = "refused"


_OUTCOME_TEXT = {
    CopyOutcome.COPIED: "copied",
    CopyOutcome.IDENTICAL: "already there, identical: left as it is",
    CopyOutcome.REFUSED: "REFUSED: a different plan of this name is in the target; it was left as it is "
    "(rename or archive one of the two, then copy again)",
}


class NotCopyable(PlanningError):
    def __init__(self, role: str, where: str) -> None:
        super().__init__(f"The {role} store {where} cannot copy plans in or out (it is not Copyable).")


@dataclass(frozen=True)
class PlanCopy:
    """What happened to one plan."""

    name: str
    archived: bool
    tasks: int
    outcome: CopyOutcome

    def line(self) -> str:
        state = "archived" if self.archived else "active"
        noun = "task" if self.tasks == 1 else "tasks"
        return f"{self.name} ({state}, {self.tasks} {noun}): {_OUTCOME_TEXT[self.outcome]}"


@dataclass
class CopyReport:
    source: str  # describe() of each store: no password
    target: str
    plans: list[PlanCopy] = field(default_factory=list)

    def _named(self, outcome: CopyOutcome) -> list[str]:
        return [p.name for p in self.plans if p.outcome is outcome]

    @property
    def copied(self) -> list[str]:
        return self._named(CopyOutcome.COPIED)

    @property
    def identical(self) -> list[str]:
        return self._named(CopyOutcome.IDENTICAL)

    @property
    def refused(self) -> list[str]:
        return self._named(CopyOutcome.REFUSED)

    def summary(self) -> str:
        counts = f"{len(self.copied)} copied, {len(self.identical)} already identical, {len(self.refused)} refused"
        noun = "plan" if len(self.plans) == 1 else "plans"
        line = f"{len(self.plans)} {noun} from {self.source} to {self.target}: {counts}"
        if self.refused:
            line += f"; refused, the target's own left as they are: {', '.join(self.refused)}"
        return line


def copy_plans(src: PlanStore, dst: PlanStore, on_plan: Callable[[PlanCopy], None] | None = None) -> CopyReport:
    """Copy every plan of `src` (active and archived, oldest first) into `dst`.
    `on_plan` hears each plan as it is done (the CLI prints it at once). Raises
    NotCopyable before anything is read when either store cannot copy; a store error
    stops the copy (the plans done so far stay done, each whole)."""
    for role, store in (("source", src), ("target", dst)):
        if not isinstance(store, Copyable):
            raise NotCopyable(role, store.describe())
    assert isinstance(src, Copyable) and isinstance(dst, Copyable)  # for the type checker
    report = CopyReport(source=src.describe(), target=dst.describe())
    for record in src.export_plans():
        try:
            outcome = CopyOutcome.COPIED if dst.import_plan(record) else CopyOutcome.IDENTICAL
        except PlanExists:
            outcome = CopyOutcome.REFUSED
        done = PlanCopy(record.name, record.archived, len(record.tasks), outcome)
        report.plans.append(done)
        if on_plan is not None:
            on_plan(done)
    return report
