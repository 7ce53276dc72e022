"""Every failure the core reports, one small class each.

Each message tells the agent what to do next: the server shows it verbatim as the
tool error, so it is written for a model that must recover on its own.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import ClassVar

# A plan slug's rule, here because the messages below state it and this module imports nothing
# of the package's; planning_core.names enforces it.
MAX_SLUG = 60
SLUG_RULE = f"1-{MAX_SLUG} characters from a-z, 0-9 and '-'"


def _ids(ids: Iterable[int]) -> str:
    return ", ".join(f"#{i}" for i in sorted(set(ids)))


class PlanningError(Exception):
    """Base class: a refusal with an actionable message. Nothing was changed."""


class InvalidInput(PlanningError):
    """An argument is malformed or out of bounds."""


class InvalidPlanName(InvalidInput):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Invalid plan name {name!r}: name a plan by its folder, YYYY-MM-DD-<slug> with a slug of "
            f"{SLUG_RULE}, or by a unique part of it (e.g. add-auth). "
            "Call PlanList to see the names."
        )


class InvalidSlug(InvalidInput):
    def __init__(self, slug: str) -> None:
        super().__init__(
            f"Invalid name {slug!r}: use {SLUG_RULE} (e.g. 'add-auth'), or leave name out to derive it from the title."
        )


class InvalidTaskId(InvalidInput):
    def __init__(self, value: object) -> None:
        super().__init__(f'Invalid task id {value!r}: use a positive integer such as 3, "3" or "#3".')


class TaskIdsExhausted(PlanningError):
    def __init__(self, plan: str, limit: int) -> None:
        super().__init__(
            f"Refused: plan {plan} has used its last task id (#{limit}); ids are never reused, so "
            "no task can be added to it. Nothing was written. Create a new plan with PlanCreate "
            "for further tasks."
        )


class PlanNotFound(PlanningError):
    def __init__(self, name: str, active: Iterable[str] = ()) -> None:
        names = ", ".join(active)
        hint = f"Active plans: {names}." if names else "There are no active plans; call PlanCreate."
        super().__init__(f"Plan {name!r} not found. {hint}")


def _active_hint(active: Sequence[str]) -> str:
    if not active:
        return "There are no active plans; call PlanCreate to start one."
    if len(active) == 1:
        return f"The only active plan is {active[0]}; pass plan={active[0]}, or call again without plan to use it."
    return f"Active plans: {', '.join(active)}; pass plan=<name> to choose one."


class AmbiguousPlan(PlanningError):
    def __init__(self, part: str, candidates: Iterable[str]) -> None:
        super().__init__(
            f"Plan {part!r} matches several plans: {', '.join(candidates)}. Give the full name or a longer part of it."
        )


class CurrentPlanGone(PlanningError):
    """The session's current plan stopped being active under the server (archived or
    removed by another session or by hand). Refused rather than switched silently: a task id
    meant for the old plan must not land in another one."""

    def __init__(self, name: str, archived: bool, active: Iterable[str] = ()) -> None:
        where = (
            f"it was archived (read-only; TaskList and TaskGet with plan={name} still read it)"
            if archived
            else "it was removed or renamed outside this server"
        )
        super().__init__(
            f"The session's current plan {name} is no longer an active plan: {where}. Nothing was changed. "
            + _active_hint(list(active))
        )


class NoCurrentPlan(PlanningError):
    def __init__(self, active: Iterable[str] = ()) -> None:
        names = list(active)
        if names:
            msg = "Several plans are active; say which one with the plan parameter: " + ", ".join(names) + "."
        else:
            msg = "There is no active plan. Call PlanCreate first, or pass plan=<name>."
        super().__init__(msg)


class PlanArchived(PlanningError):
    def __init__(self, name: str) -> None:
        super().__init__(f"Plan {name!r} is archived and is read-only. Create a new plan with PlanCreate.")


class TaskNotFound(PlanningError):
    def __init__(self, plan: str, ids: Iterable[int]) -> None:
        ids = list(ids)
        noun = "Task" if len(ids) == 1 else "Tasks"
        super().__init__(f"{noun} {_ids(ids)} not found in plan {plan}. Call TaskList to see the task ids.")


class DependencyCycle(PlanningError):
    def __init__(self, cycle: list[int]) -> None:
        self.cycle = cycle
        path = " -> ".join(f"#{i}" for i in cycle)
        super().__init__(
            f"Refused: this dependency would close a cycle {path}. Remove one of these links or restructure the tasks."
        )


class SelfDependency(PlanningError):
    def __init__(self, task_id: int) -> None:
        super().__init__(f"Refused: task #{task_id} cannot block or be blocked by itself.")


class ParentRefused(PlanningError):
    """A parent that is the task itself, or one of its own parts (a parent cycle)."""

    def __init__(self, task_id: int, parent: int, chain: Sequence[int] = ()) -> None:
        if not chain:
            super().__init__(f"Refused: task #{task_id} cannot be its own parent.")
            return
        path = " -> ".join(f"#{i}" for i in chain)
        super().__init__(
            f"Refused: #{parent} is a part of task #{task_id} ({path}, each a part of the next), so it "
            f"cannot be its parent. Nothing was changed."
        )


class UnfinishedParts(PlanningError):
    """A parent completed, or deleted, while it has parts (completed: unfinished ones)."""

    def __init__(self, task_id: int, parts: Iterable[int], deleting: bool = False) -> None:
        parts = set(parts)
        if deleting:
            super().__init__(
                f"Task #{task_id} is the parent of {_ids(parts)}: delete them, or move them out "
                "(TaskUpdate parent=0, or another parent), first. Nothing was changed."
            )
            return
        super().__init__(
            f"Task #{task_id} cannot be completed: its parts {_ids(parts)} are not completed. "
            f"Complete them first (TaskList parent={task_id} lists them). Nothing was changed."
        )


class TaskBlocked(PlanningError):
    def __init__(self, task_id: int, blockers: Iterable[int]) -> None:
        blockers = set(blockers)
        them = "it" if len(blockers) == 1 else "those"
        super().__init__(
            f"Task #{task_id} cannot start: it is blocked by unfinished {_ids(blockers)}. "
            f"Finish {them} first, or call TaskList with status='ready' to find work that can start."
        )


class GateRefused(PlanningError):
    """An agent started or completed a gated task, or lifted a person's gate (gates.py);
    `who` says who completes it."""

    def __init__(self, task_id: int, action: str, who: str) -> None:
        self.who = who
        super().__init__(f"Task #{task_id} has a gate: no agent may {action} it; {who}. Nothing was changed.")


class NotGated(PlanningError):
    def __init__(self, task_id: int, status: str) -> None:
        why = "is already completed" if status == "completed" else "has no gate (an agent completes it)"
        super().__init__(f"Task #{task_id} {why}: there is nothing to approve. Nothing was changed.")


class ClaimConflict(PlanningError):
    def __init__(self, task_id: int, owner: str) -> None:
        super().__init__(
            f"Task #{task_id} is already in progress under owner {owner!r}. "
            "Pick another task (TaskList status='ready'), or coordinate with that owner."
        )


class TakenOver(ClaimConflict):
    """A former owner's update of a task another owner took over once its lease ran out."""

    def __init__(self, task_id: int, former: str, owner: str, taken_at: str) -> None:
        PlanningError.__init__(
            self,
            f"Task #{task_id} was taken over by {owner!r}{f' at {taken_at}' if taken_at else ''}, after the "
            f"lease of {former!r} ran out. Nothing was changed: it is no longer yours to change. Stop working "
            'on it (a note with what you learned is welcome: TaskUpdate note), and claim another (taskId "next").',
        )


class NextClaimMisused(InvalidInput):
    """TaskUpdate taskId "next" is a claim and nothing else."""

    def __init__(self, problem: str) -> None:
        super().__init__(
            f'taskId "next" claims the best ready task, so it needs status="in_progress" and an owner, '
            f"and takes only leaseSeconds, label, parent and plan besides: {problem}. Nothing was changed. To change a "
            "task, name it by its id."
        )


class NothingReady(PlanningError):
    """TaskUpdate taskId "next" found no task to claim; `reason` (ranking.nothing_ready)
    says whether to wait, for what and until when, or to stop. `work_left`: some task the
    claim may take is unfinished (a waiting claim waits); `wake_at`: when the first lease
    on one of those runs out (a waiting claim tries again then), or None."""

    def __init__(self, plan: str, reason: str, work_left: bool = False, wake_at: dt.datetime | None = None) -> None:
        self.reason = reason
        self.work_left = work_left
        self.wake_at = wake_at
        super().__init__(f"No task to claim in plan {plan}: {reason} Nothing was changed.")


class PlanNotFinished(PlanningError):
    def __init__(self, name: str, unfinished: Iterable[int]) -> None:
        super().__init__(
            f"Plan {name} still has unfinished tasks {_ids(unfinished)}. Complete them, "
            "or call PlanArchive with force=true to archive anyway (files are moved, never deleted)."
        )


class PlanExists(PlanningError):
    def __init__(self, name: str) -> None:
        super().__init__(f"Plan {name!r} already exists. Choose another name.")


class ArchiveExists(PlanningError):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Cannot archive {name}: done/{name} already exists. Rename one of the two folders by hand, "
            "then call PlanArchive again."
        )


class CorruptTask(PlanningError):
    def __init__(self, plan: str, task_id: int, filename: str, reason: str) -> None:
        self.task_id = task_id
        self.filename = filename
        self.reason = reason
        super().__init__(
            f"Task #{task_id} ({filename}) in plan {plan} cannot be read: {reason}. "
            "It was left untouched; fix or remove it by hand. Other tasks keep working."
        )


class BlockerUnreadable(CorruptTask):
    """Starting a task needs its blockers' statuses; one of them cannot be read."""

    def __init__(self, plan: str, task_id: int, blocker: CorruptTask) -> None:
        self.task_id = blocker.task_id
        self.filename = blocker.filename
        self.reason = blocker.reason
        PlanningError.__init__(
            self,
            f"Task #{task_id} cannot start: its blocker #{blocker.task_id} cannot be read "
            f"({blocker.filename}: {blocker.reason}). Nothing was changed. Fix or remove that task by hand in "
            f"plan {plan}, or call TaskUpdate with removeBlockedBy [{blocker.task_id}].",
        )


class PlanBusy(PlanningError):
    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(
            f"Plan {name} is busy: another writer has held its lock for over {seconds:g}s. "
            "Nothing was changed; try again in a moment."
        )


class StorageError(PlanningError):
    def __init__(self, what: str, reason: str) -> None:
        super().__init__(
            f"Could not write {what}: {reason}. Nothing was changed; check that the planning root "
            "is writable and the disk has space."
        )


class PlanNotStorable(PlanningError):
    """A copied plan the target cannot keep as it is: refused whole, nothing written."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(
            f"The plan {name} cannot be stored in the target as it is: {reason}. Nothing of it was "
            "written; fix that in the source, then copy again."
        )


class PlanUnreadable(StorageError):
    def __init__(self, name: str, reason: str) -> None:
        PlanningError.__init__(
            self,
            f"Cannot read the plan folder {name}: {reason}. Check its permissions; the other plans keep working.",
        )


class PartialWriteError(PlanningError):
    def __init__(self, plan: str, replaced: str, reason: str) -> None:
        super().__init__(
            f"Writing plan {plan} was interrupted ({reason}) after {replaced} had been replaced. "
            "Call TaskList or TaskGet to see the state before retrying; fix the file system problem first."
        )


class TodoInvalid(InvalidInput):
    """The todo list breaks one of its rules (count, one in progress)."""


class CompletionRefused(PlanningError):
    """A TaskCompleted event hook refused the completion (exit 2 or timeout); the
    message carries the hook's own explanation. The task was left as it was."""


# -- the database store (planning_core/stores/postgres) ------------------------------------


class DatabaseUnreachable(StorageError):
    """No connection to the database could be made: nothing was sent, nothing changed.
    `where` names the host, port and database, never the password."""

    def __init__(self, where: str, reason: str) -> None:
        PlanningError.__init__(
            self,
            f"Cannot reach the PostgreSQL database {where}: {reason}. Nothing was changed; check that "
            "the database server is running and reachable and that the store URL is right, then try again.",
        )


class DatabaseAtLimit(DatabaseUnreachable):
    """The database refuses more connections (a role's, a database's or the server's
    limit): nothing was sent, nothing changed."""

    def __init__(self, where: str, reason: str, needed: int) -> None:
        PlanningError.__init__(
            self,
            f"The PostgreSQL database {where} refuses more connections: {reason}. Nothing was changed; try "
            f"again in a moment. A planning-mcp server opens up to {needed} connections; raise the limit of the "
            "store's role (ALTER ROLE ... CONNECTION LIMIT) or the server's max_connections to fit every server.",
        )


class DatabaseBusy(StorageError):
    """The database answers, but every connection of this server stayed in use."""

    def __init__(self, where: str, connections: int, seconds: float) -> None:
        PlanningError.__init__(
            self,
            f"All {connections} connections of this server to the PostgreSQL database {where} stayed busy "
            f"for {seconds:g}s. Nothing was changed; try again in a moment.",
        )


class DatabaseLost(StorageError):
    """The connection broke during a call. `outcome` says what became of the change:
    "applied", "not applied", "unknown" (lost while committing) or "read" (a read: no
    change). The server reconnects by itself when the database is back."""

    OUTCOMES: ClassVar[dict[str, str]] = {
        "applied": "The change WAS applied: do not repeat it; check with TaskGet/TaskList.",
        "not applied": "The change was NOT applied; it is safe to retry once the database is back.",
        "unknown": (
            "It is UNKNOWN whether the change was applied (the connection was lost while committing it): "
            "check with TaskGet/TaskList before retrying."
        ),
        "read": (
            "Nothing was changed by this read; try again in a moment. If this call made a change "
            "(PlanCreate), check with PlanList/TaskList whether it was saved before retrying."
        ),
    }

    def __init__(self, where: str, doing: str, outcome: str, reason: str) -> None:
        self.outcome = outcome
        PlanningError.__init__(
            self,
            f"The connection to the PostgreSQL database {where} was lost while {doing} ({reason}). "
            + self.OUTCOMES[outcome],
        )


class DatabaseUnconfirmed(StorageError):
    """COMMIT returned, but without the synchronous standby's confirmation: its wait was
    cancelled (by anyone, or by this server after COMMIT_WAIT). PostgreSQL then reports
    success with a WARNING although the standby may not have the change, so a failover
    may lose it: the outcome is unknown, never "applied"."""

    def __init__(self, where: str, doing: str, reason: str) -> None:
        PlanningError.__init__(
            self,
            f"The PostgreSQL database {where} did not confirm {doing} ({reason}). It is UNKNOWN whether "
            "the change was applied: it may be committed on the primary but not on its synchronous "
            "standby, so a failover could lose it. Read the task back with TaskGet/TaskList before retrying.",
        )


class DatabaseRefused(StorageError):
    """The database answered with an error (not a lost connection): the transaction
    was rolled back."""

    def __init__(self, where: str, doing: str, reason: str) -> None:
        PlanningError.__init__(
            self,
            f"The PostgreSQL database {where} refused {doing}: {reason}. Nothing was changed; "
            "check the server's log and the store user's rights (a full disk, a read-only replica).",
        )


class DatabaseSchemaNewer(StorageError):
    def __init__(self, where: str, found: int, known: int) -> None:
        PlanningError.__init__(
            self,
            f"The PostgreSQL database {where} has planning schema version {found}, newer than this "
            f"server's {known}. Nothing was changed; upgrade planning-mcp on this machine.",
        )


class SessionBusy(PlanningError):
    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"This session's state is busy: another call of the same session has held it for over "
            f"{seconds:g}s. Nothing was changed; try again in a moment."
        )
