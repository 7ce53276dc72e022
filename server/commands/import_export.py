"""`planning-mcp import PATH` (another tool's tasks into a plan) and `planning-mcp export
--format beads` (a plan as beads JSONL on stdout), through planning_core.import_export.importing.

Exit codes: 0 imported (or exported); 2 refused: the source cannot be read as a plan (a
cycle, a dependency on a missing id, a file over the bound, a symbolic link, invalid JSON),
or the store cannot be used. A refusal writes nothing."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from planning_core import PlanningError
from planning_core.actions import Actions
from planning_core.import_export.import_formats import FORMATS, load
from planning_core.import_export.importing import beads_lines
from planning_core.store import PlanStore

from ..common.cli_common import EXIT_CONFIG, EXIT_OK, command_caller
from ..common.store_choice import StoreChoice, StoreChoiceError, add_store_arguments, open_for_reading, open_for_writing

EXPORT_FORMATS = ("beads",)


def add_import_parsers(sub: Any) -> None:
    i = sub.add_parser(
        "import", help="bring another tool's tasks (beads, Task Master, Claude Code, tasks.md) into a plan"
    )
    i.add_argument("path", metavar="PATH", help="the tool's task file or folder (or the project folder holding it)")
    i.add_argument("--plan", metavar="NAME", help="the plan to import into (created when missing)")
    i.add_argument("--format", dest="import_format", choices=FORMATS, help="read PATH as this format")
    i.add_argument("--tag", help="Task Master: import only this tag (default: each tag into its own plan)")
    add_store_arguments(i)
    i.set_defaults(run=run_import)
    e = sub.add_parser("export", help="write a plan's tasks in another tool's format to stdout")
    e.add_argument("--format", dest="export_format", choices=EXPORT_FORMATS, default="beads", help="beads: JSONL")
    e.add_argument("--plan", metavar="NAME", help="the plan (default: the only active plan)")
    add_store_arguments(e)
    e.set_defaults(run=run_export)


def run_import(args: argparse.Namespace, choice: StoreChoice) -> int:
    try:
        plans = load(Path(args.path), args.import_format, args.tag)  # every check before a write
        if args.plan and len(plans) > 1:
            raise StoreChoiceError(f"{args.path} holds {len(plans)} tags; give --tag with --plan")
        with _opened(open_for_writing, choice) as store:
            actions, caller = Actions.over(store), command_caller(args.command)
            for plan in plans:
                print(actions.plan_import(caller, plan, args.plan).line(), flush=True)
    except (StoreChoiceError, PlanningError, OSError) as e:
        return _refused(e)
    return EXIT_OK


def run_export(args: argparse.Namespace, choice: StoreChoice) -> int:
    try:
        with _opened(open_for_reading, choice) as store:
            actions = Actions.over(store)
            snap = actions.snapshot(actions.resolve(args.plan, None))
            for line in beads_lines(snap):
                sys.stdout.write(line + "\n")
    except BrokenPipeError:
        raise  # stdout's reader left (`export | head`): main's quiet exit, not a problem with the store
    except (StoreChoiceError, PlanningError, OSError) as e:
        return _refused(e)
    return EXIT_OK


@contextmanager
def _opened(opener: Callable[[StoreChoice], PlanStore], choice: StoreChoice) -> Iterator[PlanStore]:
    store = opener(choice)
    try:
        yield store
    finally:
        store.close()


def _refused(e: Exception) -> int:
    print(f"planning-mcp: {e}", file=sys.stderr)
    return EXIT_CONFIG
