"""`planning-mcp status`: the active plans and their tasks (`--json`: for a program), or with
`--check-done` whether a plan is done (server/commands/done.py)."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from planning_core import PlanningError
from planning_core.actions import Actions
from planning_core.rendering.render import startup_summary
from planning_core.store import PlanStore

from ..common.cli_common import EXIT_OK, add_store_arguments
from ..common.store_choice import StoreChoice, open_for_reading
from .done import add_check_done_arguments, run_check_done
from .store_run import run_on_store
from .views import status_json

log = logging.getLogger("planning_mcp")


def summary(actions: Actions) -> str:
    snapshots = []
    for name in actions.active_plans():
        try:
            snapshots.append(actions.view(name))  # read-only: no copy of every task
        except PlanningError as e:  # one unreadable plan must not stop the server
            log.warning("plan %s is left out of the summary: %s", name, e)
    return startup_summary(snapshots)


def add_status_parser(sub: Any) -> None:
    st = sub.add_parser("status", help="print the active plans and their tasks")
    add_store_arguments(st)
    st.add_argument("--json", action="store_true", help="machine-readable output")
    add_check_done_arguments(st)
    st.set_defaults(run=run_status)


def run_status(args: argparse.Namespace, choice: StoreChoice) -> int:
    if args.check_done or args.plan:
        return run_check_done(args, choice)
    return run_on_store(choice, open_for_reading, lambda store: _print_status(args, store))


def _print_status(args: argparse.Namespace, store: PlanStore) -> int:
    actions = Actions.over(store)
    print(status_json(actions) if args.json else summary(actions))
    return EXIT_OK
