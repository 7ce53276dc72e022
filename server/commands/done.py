"""`planning-mcp approve PLAN ID` (a person completes a gated task) and
`planning-mcp status --check-done [PLAN]` (is the work done? for scripts, CI and other
hosts' goal loops): the judgement is planning_core.done's, the gates planning_core.gates'.

check-done exits 0 when the plan is done (without PLAN: every active plan), 1 with one
line saying what is left and what comes next, 2 when it cannot tell (no such plan, no
store). Before judging, time gates whose time has passed are completed, as the next
claim completes them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from planning_core import PlanningError
from planning_core.actions import Actions
from planning_core.rendering.render import updated_text
from planning_core.safetext import escape
from planning_core.store import PlanStore
from planning_core.stores import is_database_url

from ..common.cli_common import EXIT_CONFIG, EXIT_OK, add_store_arguments, command_caller
from ..common.store_choice import StoreChoice, StoreChoiceError, open_for_writing

EXIT_NOT_DONE = 1  # status --check-done: work remains


def add_approve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    a = sub.add_parser(
        "approve",
        help="a person approves a gated task: it completes, and the tasks waiting for it can start",
    )
    add_store_arguments(a)
    a.add_argument("plan", help="the plan's name, or a unique part of it")
    a.add_argument("task", help="the task's id (5 or #5)")
    a.set_defaults(run=run_approve)


def add_check_done_arguments(status: argparse.ArgumentParser) -> None:
    status.add_argument(
        "--check-done",
        action="store_true",
        help="exit 0 when the plan is done, 1 (with a line saying what is left) when not, 2 on error",
    )
    status.add_argument("plan", nargs="?", help="with --check-done: the plan (default: every active plan)")


def _open(choice: StoreChoice) -> PlanStore:
    if choice.folder is not None and not (choice.folder / "todo").is_dir() and not is_database_url(choice.url):
        raise StoreChoiceError(f"no plans at {choice.folder}; pass --root DIR or --store URL")
    return open_for_writing(choice)


def _run_on_store(choice: StoreChoice, work: Callable[[PlanStore], int]) -> int:
    """work's exit code on the opened store, or EXIT_CONFIG once the reason the store cannot
    be opened, or work failed, is on stderr."""
    try:
        store = _open(choice)
    except (StoreChoiceError, PlanningError, OSError) as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        return work(store)
    except PlanningError as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return EXIT_CONFIG
    finally:
        store.close()


def run_approve(args: argparse.Namespace, choice: StoreChoice) -> int:
    def approve(store: PlanStore) -> int:
        plan, change = Actions.over(store).approval(command_caller(args.command), args.task, args.plan)
        subject = escape(change.task.subject) if change.task else ""
        lines = [f"Approved #{change.task_id} {subject} in plan {plan}: it is completed."]
        lines += updated_text(change.task_id, change.changed, change.unblocked, change.all_done).split("\n")[1:]
        print("\n".join(lines))
        return EXIT_OK

    return _run_on_store(choice, approve)


def run_check_done(args: argparse.Namespace, choice: StoreChoice) -> int:
    if not args.check_done:
        print(
            f"planning-mcp: status takes a plan with --check-done only: status --check-done {args.plan}",
            file=sys.stderr,
        )
        return EXIT_CONFIG

    def check_done(store: PlanStore) -> int:
        actions, caller = Actions.over(store), command_caller(args.command)
        names = [actions.resolve(args.plan, None)] if args.plan else actions.active_plans()
        lines = []
        for name in names:
            left = actions.work_left(caller, name)
            if not left.done:
                print(left.line)
                return EXIT_NOT_DONE
            lines.append(left.line)
        print(lines[0] if len(lines) == 1 else f"All {len(lines):,} active plans are done (none is left).")
        return EXIT_OK

    return _run_on_store(choice, check_done)
