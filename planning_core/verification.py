"""A completion that waits for its checks (verify.py): the checks a task's criteria name run
before `status: completed` is written, and a failure refuses it.

TaskUpdate `completed` on a task that names checks:
1. refused at once when a name is undefined, the check file unreadable or untrusted;
2. the task's record says it is being verified (`running`, until when), one write;
3. the checks run one after another in the project folder, in a thread of their own;
4. all pass: the completion (with the rest of the patch) and the `passed` record, one write;
   one fails: only the `failed` record is written (which check, how, the output's tail),
   the task stays as it was, and the completion is refused with the same;
5. the caller waits at most ANSWER_WITHIN seconds (sending progress meanwhile): when the
   checks still run then, it is answered that they do, and step 4 happens without it.
Each record is a write of the task, so each run is in the plan's history. A record is only
written over its own run's (Verification.follows): a later run supersedes an earlier one.

A server that stops while checks run kills them and writes `interrupted` (close()); one that
is killed leaves `running` until its `until` has passed, after which a new completion runs
the checks afresh (docs/decisions.md).
"""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import logging
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import update
from .caller import NOBODY
from .errors import CompletionRefused, PlanningError
from .history import utc_now
from .models import Task, TaskPatch, TaskStatus, named_checks
from .verify import (
    ANSWER_WITHIN,
    FAILED,
    INTERRUPTED,
    PASSED,
    RUNNING,
    Check,
    CheckFile,
    CheckRun,
    Runs,
    Verification,
    VerificationSuperseded,
    interrupted_record,
    is_running,
    run_check,
)

if TYPE_CHECKING:
    from .planner import Planner, TaskChange

log = logging.getLogger("planning_mcp.checks")

# Progress while a caller waits: (seconds so far, seconds at most, what runs).
Progress = Callable[[float, float, str], None]
PROGRESS_EVERY = 1.0  # seconds between progress notifications while a caller waits
STOP_WAIT = 10.0  # seconds close() waits for the runs it stopped to write their record
UNTIL_MARGIN = 30  # seconds after the checks' timeouts a `running` record is surely stale


@dataclass
class StillRunning:
    """The checks outlasted the caller's wait: what to tell it."""

    task_id: int
    status: str  # the task's, still
    text: str


@dataclass(frozen=True)
class _Completion:
    """The completion asked for: the patch, the owner its caller is known as, and the writer
    the history names (the caller's, for every write of the run)."""

    patch: TaskPatch
    known_as: str | None
    by: str


@dataclass
class _Run:
    run_id: str
    checks: list[Check]
    started: float
    done: concurrent.futures.Future[TaskChange]
    current: str = ""


class Verifier:
    def __init__(self, planner: Planner, checks: CheckFile, answer_within: float = ANSWER_WITHIN) -> None:
        self.planner = planner
        self.checks = checks
        self.answer_within = answer_within
        self.runs = Runs()
        self._active: dict[tuple[str, int], _Run] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._threads: set[threading.Thread] = set()

    def check_names(self, acceptance: Sequence[Any] | None) -> None:
        """Refuse criteria naming a check the check file does not define (TaskCreate, TaskUpdate,
        PlanCreate): a name, never a command, and one the user defined."""
        if acceptance:
            self.checks.check_names(named_checks(a for a in acceptance if isinstance(a, str)))

    def complete(
        self,
        plan: str,
        task_id: int,
        patch: TaskPatch,
        progress: Progress | None = None,
        known_as: str | None = None,
        by: str = NOBODY,
    ) -> TaskChange | StillRunning | None:
        """Complete the task after its checks pass (see the module). None: it names no check
        (or is completed already): the caller completes it as usual. `known_as` and `by`: as
        for Planner.update_task. `task_id`: a task's (a claim of the next task is never a
        completion)."""
        task = self.planner.get_task(plan, task_id)
        names = named_checks(update.checked(patch)[0].values.get("acceptance", task.acceptance))
        if task.status is TaskStatus.COMPLETED or not names:
            return None
        key = (plan, task.id)
        with self._lock:
            run = self._active.get(key)
        if run is None:
            elsewhere = _running_elsewhere(task)
            if elsewhere:
                return StillRunning(task.id, task.status.value, elsewhere)
            run = self._start(plan, task, _Completion(patch, known_as, by), self.checks.resolve(names), names)
        return self._wait(task, run, progress)

    def _start(self, plan: str, task: Task, patch: _Completion, checks: list[Check], names: list[str]) -> _Run:
        run = _Run(secrets.token_hex(6), checks, time.monotonic(), concurrent.futures.Future())
        until = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=sum(c.timeout for c in checks) + UNTIL_MARGIN)
        record = {
            "state": RUNNING,
            "checks": names,
            "run": run.run_id,
            "at": utc_now(),
            "until": until.isoformat(timespec="seconds").replace("+00:00", "Z"),
        }
        self.planner.update_task(plan, task.id, TaskPatch(), verification=Verification(record), by=patch.by)
        with self._lock:
            self._active[(plan, task.id)] = run
        thread = threading.Thread(target=self._run, args=(plan, task.id, patch, run, names), daemon=True, name="check")
        self._threads.add(thread)
        thread.start()
        return run

    def _wait(self, task: Task, run: _Run, progress: Progress | None) -> TaskChange | StillRunning:
        deadline = time.monotonic() + self.answer_within
        while True:
            left = deadline - time.monotonic()
            try:
                return run.done.result(timeout=max(0.0, min(PROGRESS_EVERY, left)))
            except concurrent.futures.TimeoutError:
                if left <= PROGRESS_EVERY:
                    break
            if progress is not None:
                progress(time.monotonic() - run.started, sum(c.timeout for c in run.checks), f"running {run.current}")
        total, task_id = sum(c.timeout for c in run.checks), task.id
        return StillRunning(
            task_id,
            task.status.value,
            f"Task #{task_id} is being verified: check {run.current} still runs (the checks have up to "
            f"{total:g} s). It is completed when they pass, or stays in progress with the failure; "
            f"TaskGet #{task_id} shows which. Go on with other work meanwhile.",
        )

    def _run(self, plan: str, task_id: int, asked: _Completion, run: _Run, names: list[str]) -> None:
        base = {"checks": names, "run": run.run_id}
        try:
            failed = None
            for check in run.checks:
                run.current = check.name
                result = run_check(check, self.checks.project, self.runs)
                if self._stopping.is_set():
                    raise _Stopped
                if not result.passed:
                    failed = result
                    break
            if failed is None:
                passed = Verification({**base, "state": PASSED, "at": utc_now()}, follows=run.run_id)
                change = self.planner.update_task(
                    plan, task_id, asked.patch, known_as=asked.known_as, verification=passed, by=asked.by
                )
                run.done.set_result(change)
            else:
                self._record(plan, task_id, run, _failed(base, failed), asked.by)
                run.done.set_exception(CompletionRefused(refusal(task_id, failed)))
        except _Stopped:
            self._record(plan, task_id, run, interrupted_record({**base, "at": utc_now()}), asked.by)
            run.done.set_exception(CompletionRefused(f"Task #{task_id} was not completed: the server stopped."))
        except PlanningError as e:  # the completion itself was refused (blocked, a gate, parts)
            result_text = f"passed, but the completion was refused: {e}"
            self._record(
                plan, task_id, run, {**base, "state": FAILED, "at": utc_now(), "result": result_text}, asked.by
            )
            run.done.set_exception(e)
        except BaseException as e:  # never lose the waiter: it is told, and the log says why
            log.exception("checks of task #%s in %s", task_id, plan)
            refused = CompletionRefused(f"Task #{task_id} was not completed: its checks failed to run ({e}).")
            run.done.set_exception(refused)
        finally:
            with self._lock:
                self._active.pop((plan, task_id), None)
            self._threads.discard(threading.current_thread())

    def _record(self, plan: str, task_id: int, run: _Run, record: dict[str, Any], by: str) -> None:
        try:
            verification = Verification(record, follows=run.run_id)
            self.planner.update_task(plan, task_id, TaskPatch(), verification=verification, by=by)
        except VerificationSuperseded:
            pass
        except PlanningError as e:
            log.warning("the result of task #%s's checks in %s was not recorded: %s", task_id, plan, e)

    def close(self) -> None:
        """Stop the running checks (their process groups are killed) and wait a bounded time
        for each run to record `interrupted`."""
        self._stopping.set()
        self.runs.kill_all()
        deadline = time.monotonic() + STOP_WAIT
        for thread in list(self._threads):
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        self._stopping.clear()  # a server object may serve again (a new client in tests)


class _Stopped(Exception):
    pass


def _failed(base: dict[str, Any], r: CheckRun) -> dict[str, Any]:
    return {
        **base,
        "state": FAILED,
        "at": utc_now(),
        "check": r.check.name,
        "command": r.check.command,
        "result": r.outcome(),
        "output": r.output,
    }


def refusal(task_id: int, r: CheckRun) -> str:
    """The refusal of a completion whose check failed: the command, how it ended, its output's tail."""
    out = f"\n{r.output}" if r.output else " (no output)"
    return (
        f"Task #{task_id} was not completed: check {r.check.name} (`{r.check.command}`) {r.outcome()}.{out}\n"
        "Fix what it reports, then set the task to completed again."
    )


def _running_elsewhere(task: Task) -> str | None:
    """When another server is verifying the task now (its record says running, until a time
    still to come): what to answer. A record past its `until` is an interrupted run."""
    if not is_running(task.verification, dt.datetime.now(dt.UTC)):
        return None
    until = str((task.verification or {}).get("until", ""))[11:16]
    return (
        f"Task #{task.id} is being verified by another server until {until}Z at the latest; "
        f"TaskGet #{task.id} shows the result."
    )


__all__ = ["INTERRUPTED", "StillRunning", "Verifier", "refusal"]
