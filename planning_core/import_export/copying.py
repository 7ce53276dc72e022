"""Copying every plan from one store to another (`planning-mcp copy`), through the
optional `Copyable` ability of both stores.

Each plan is copied whole or not at all, and is never overwritten: a plan whose name is
free in the target is copied; one stored there exactly so is left alone (so a second run
changes nothing); one whose name is taken by a different plan (other tasks, another
high-water mark, or active on one side and archived on the other) is refused and the
target's plan stays as it was. A plan the source cannot read, or the target cannot keep
as it is (a task document PostgreSQL cannot hold as text, a name that is not a plan
name), is not copied, and its reason is said; what the source holds of a plan but could
not read (a FIFO or symlink where a task file should be, task_07.json, a file past the
plan's bound) is named on that plan's line. The copy goes on with the next plan in every
case, so one plan never hides the others; only a store that cannot be reached at all
stops it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from ..errors import DatabaseUnreachable, PlanExists, PlanningError
from ..store import Copyable, PlanRecord, PlanStore


class CopyOutcome(Enum):
    COPIED = "copied"
    IDENTICAL = "unchanged"
    REFUSED = "refused"
    NOT_COPIED = "not copied"  # the target cannot keep it as it is
    UNREADABLE = "not read"  # the source cannot read it


_OUTCOME_TEXT = {
    CopyOutcome.COPIED: "copied",
    CopyOutcome.IDENTICAL: "already there, identical: left as it is",
    CopyOutcome.REFUSED: "REFUSED: a different plan of this name is in the target; it was left as it is "
    "(rename or archive one of the two, then copy again)",
    CopyOutcome.NOT_COPIED: "NOT COPIED",
    CopyOutcome.UNREADABLE: "NOT READ from the source, nothing copied",
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
    reason: str = ""  # why it was not copied or not read
    left_behind: tuple[str, ...] = ()  # "entry: reason" for what the source could not read

    @property
    def whole(self) -> bool:
        """Is this plan in the target as the source holds it?"""
        return self.outcome in (CopyOutcome.COPIED, CopyOutcome.IDENTICAL) and not self.left_behind

    def line(self) -> str:
        if self.outcome is CopyOutcome.UNREADABLE:
            head = self.name
        else:
            state = "archived" if self.archived else "active"
            noun = "task" if self.tasks == 1 else "tasks"
            head = f"{self.name} ({state}, {self.tasks} {noun})"
        text = f"{head}: {_OUTCOME_TEXT[self.outcome]}"
        if self.reason:
            text += f": {self.reason}"
        if self.left_behind:
            noun = "entry" if len(self.left_behind) == 1 else "entries"
            text += f"; LEFT BEHIND {len(self.left_behind)} {noun} the source cannot read: " + "; ".join(
                self.left_behind
            )
        return text


class _PlansWith:
    """A CopyReport's names of the plans with one outcome."""

    def __init__(self, outcome: CopyOutcome) -> None:
        self.outcome = outcome

    def __get__(self, report: CopyReport, owner: type) -> list[str]:
        return [p.name for p in report.plans if p.outcome is self.outcome]


@dataclass
class CopyReport:
    source: str  # describe() of each store: no password
    target: str
    plans: list[PlanCopy] = field(default_factory=list)

    copied = _PlansWith(CopyOutcome.COPIED)
    identical = _PlansWith(CopyOutcome.IDENTICAL)
    refused = _PlansWith(CopyOutcome.REFUSED)
    not_copied = _PlansWith(CopyOutcome.NOT_COPIED)
    unreadable = _PlansWith(CopyOutcome.UNREADABLE)

    @property
    def incomplete(self) -> list[str]:
        """Plans in the target without some of what the source holds of them."""
        return [p.name for p in self.plans if p.left_behind and p.outcome is not CopyOutcome.UNREADABLE]

    @property
    def complete(self) -> bool:
        """Every plan of the source is in the target, whole."""
        return all(p.whole for p in self.plans)

    def summary(self) -> str:
        counts = f"{len(self.copied)} copied, {len(self.identical)} already identical, {len(self.refused)} refused"
        failed = ((self.not_copied, "not copied"), (self.unreadable, "not read from the source"))
        counts += "".join(f", {len(names)} {what}" for names, what in failed if names)
        noun = "plan" if len(self.plans) == 1 else "plans"
        line = f"{len(self.plans)} {noun} from {self.source} to {self.target}: {counts}"
        if self.refused:
            line += f"; refused, the target's own left as they are: {', '.join(self.refused)}"
        for names, what in (*failed, (self.incomplete, "copied without entries the source cannot read")):
            if names:
                line += f"; {what}: {', '.join(names)}"
        return line


def copy_plans(src: PlanStore, dst: PlanStore, on_plan: Callable[[PlanCopy], None] | None = None) -> CopyReport:
    """Copy every plan of `src` (active and archived, oldest first) into `dst`.
    `on_plan` hears each plan as it is done (the CLI prints it at once). Raises
    NotCopyable before anything is read when either store cannot copy. A plan that cannot
    be read or stored is reported and the copy goes on; a store that cannot be reached
    stops it (the plans done so far stay done, each whole)."""
    for role, store in (("source", src), ("target", dst)):
        if not isinstance(store, Copyable):
            raise NotCopyable(role, store.describe())
    assert isinstance(src, Copyable) and isinstance(dst, Copyable)  # for the type checker
    report = CopyReport(source=src.describe(), target=dst.describe())
    for record in src.export_plans():
        done = _copy_one(dst, record)
        report.plans.append(done)
        if on_plan is not None:
            on_plan(done)
    return report


def _copy_one(dst: Copyable, record: PlanRecord) -> PlanCopy:
    reason = ""
    if record.unreadable is not None:
        outcome, reason = CopyOutcome.UNREADABLE, record.unreadable
    else:
        try:
            outcome = CopyOutcome.COPIED if dst.import_plan(record) else CopyOutcome.IDENTICAL
        except PlanExists:
            outcome = CopyOutcome.REFUSED
        except DatabaseUnreachable:
            raise  # the target as a whole: every later plan would wait as long
        except PlanningError as e:
            outcome, reason = CopyOutcome.NOT_COPIED, str(e)
    return PlanCopy(record.name, record.archived, len(record.tasks), outcome, reason, record.left_behind)
