"""The person's side of the CLI: `board`, `graph`, `status --json`, and the dispatch
to `watch` and `log`. The core through Actions underneath; importing this module (or
running these commands) never loads the MCP SDK, so they start fast."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from planning_core import PlanningError, PlanSnapshot
from planning_core.actions import Actions
from planning_core.errors import PlanNotFound
from planning_core.rendering.mermaid import plans_graph
from planning_core.rendering.render import task_board
from planning_core.safetext import escape, escape_json
from planning_core.store import PlanStore
from planning_core.taskgraph import graph

from ..board.data import plan_data, select_plans
from ..common.cli_common import EXIT_CONFIG, EXIT_OK, EXIT_VIEW, add_store_arguments
from ..common.store_choice import StoreChoice, StoreChoiceError, open_for_reading
from . import log


class ViewError(Exception):
    """One line for the person at the terminal, saying what to do."""


def add_parsers(sub: Any) -> None:
    """The subcommands this module runs (added to cli.parser())."""
    b = sub.add_parser("board", help="the task board: status, owners, open blockers (all active plans by default)")
    b.add_argument("plan", nargs="?", help="plan name, or a unique part of it (e.g. add-auth)")
    b.add_argument("--json", action="store_true", help="machine-readable output")
    add_store_arguments(b)
    g = sub.add_parser("graph", help="the dependency graph as Mermaid (paste into a ```mermaid block)")
    g.add_argument("plan", nargs="?", help="plan name or a unique part of it (default: every active plan)")
    add_store_arguments(g)
    w = sub.add_parser("watch", help="live view of the active plans in this terminal (Ctrl-C to quit)")
    add_store_arguments(w)
    w.add_argument(
        "--interval", type=float, default=1.0, metavar="SECONDS", help="seconds between checks for changes (default 1)"
    )
    w.add_argument("--once", action="store_true", help="print one frame and exit")
    for view in (b, g, w, log.add_parser(sub, add_store_arguments)):
        view.set_defaults(run=run_view)


def run_view(args: argparse.Namespace, choice: StoreChoice) -> int:
    try:
        store = open_for_reading(choice)
    except StoreChoiceError as e:  # cannot run as configured: the same exit code as `status` and serving
        print(f"planning-mcp: {e}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        return _show(args, store, Actions.over(store))
    finally:
        store.close()


def _show(args: argparse.Namespace, store: PlanStore, actions: Actions) -> int:
    """`store`: followed by `watch` for its changes; everything shown is read through `actions`."""
    try:
        if args.command == "board":
            names = select_plans(actions, args.plan)
            snaps = _snapshots(actions, names)
            print(board_json(actions, snaps) if args.json else board_text(actions, snaps))
        elif args.command == "graph":
            print(plans_graph(_snapshots(actions, select_plans(actions, args.plan))))
        elif args.command == "log":
            try:
                print(log.show(args, actions, select_plans(actions, args.plan)))
            except ValueError as e:
                raise ViewError(str(e)) from None
        elif args.command == "watch":
            from .watch import watch

            if args.interval <= 0:
                raise ViewError("--interval must be a positive number of seconds")
            return watch(store, actions, interval=args.interval, once=args.once, console=_console())
    except (ViewError, PlanningError) as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return EXIT_VIEW
    return EXIT_OK


def _console() -> Any:
    """rich's Console, except that a closed stdout (`watch | head`) raises BrokenPipeError for
    cli.main's one quiet exit (141, as every printing command) instead of rich's SystemExit(1)."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return PipeConsole()


def _snapshots(actions: Actions, names: Sequence[str]) -> list[PlanSnapshot]:
    out = []
    for n in names:
        try:
            out.append(actions.snapshot(n))
        except PlanNotFound:
            continue  # archived or removed while we looked
        except PlanningError as e:  # one unreadable plan must not hide the others
            print(f"planning-mcp: {e}", file=sys.stderr)
    return out


def board_text(actions: Actions, snaps: Sequence[PlanSnapshot]) -> str:
    if not snaps:
        return f"No active plans in {actions.describe()}."
    boards = []
    for snap in snaps:
        tasks = sorted(snap.tasks.values(), key=lambda t: t.id)
        board = task_board(snap.summary(), tasks, graph.open_blockers_by_task(snap), snap.corrupt)
        head, _, rest = board.partition("\n")
        archived = " (archived)" if snap.archived else ""
        notes = [
            f"! {escape(actions.task_file_place(snap.name, c.file))} cannot be read: fix it or move it out of the "
            f"{'folder' if actions.kept_in_folders() else 'database'} by hand "
            "(nothing overwrites it; the other tasks keep working)"
            for c in snap.corrupt
        ]
        boards.append("\n".join([f"{head}{archived}  {escape(snap.title)}\n{rest}".rstrip(), *notes]))
    return "\n\n".join(boards)


def board_json(actions: Actions, snaps: Sequence[PlanSnapshot]) -> str:
    plans = [plan_data(s, detail=True) for s in snaps]
    return _json({"root": actions.describe(), "plans": plans})


def status_json(actions: Actions) -> str:
    plans = [plan_data(s, detail=False) for s in _snapshots(actions, actions.active_plans())]
    return _json({"root": actions.describe(), "plans": plans})


def _json(data: Any) -> str:
    """Readable JSON (non-ASCII kept) that a terminal can print without acting on it."""
    return escape_json(json.dumps(data, ensure_ascii=False, indent=2))
