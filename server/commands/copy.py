"""`planning-mcp copy --from SRC --to DST`: every plan, active and archived, from one
store into another (files <-> PostgreSQL, or files -> files), through
planning_core.import_export.copying. One line per plan and a summary line on stdout.

Exit codes: 0 every plan is in the target, whole (copied now or already identical); 2 a
plan was refused (a different plan of that name is in the target), not copied (the
target cannot keep it as it is), not read (the source cannot read it) or copied without
entries the source cannot read (each line says which and why: the others are copied all
the same), or a store cannot be used (a source folder that does not exist, a database
that does not answer, a store that cannot copy). Store URLs are printed with their
password replaced by ***."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from planning_core import PlanningError
from planning_core.actions import Actions
from planning_core.import_export.copying import PlanCopy
from planning_core.store import PlanStore
from planning_core.stores import DatabaseUrl, redact

from ..common.cli_common import EXIT_CONFIG, EXIT_OK, command_caller
from ..common.store_choice import StoreChoiceError, from_text, open_for_reading, open_for_writing

STORE_HELP = "a folder or file: URL (the file store), or postgresql://USER:PASSWORD@HOST/DB"


def add_copy_parser(sub: Any) -> None:
    c = sub.add_parser(
        "copy",
        help="copy every plan (active and archived) from one store to another; never overwrites a plan",
    )
    c.add_argument("--from", dest="copy_from", required=True, metavar="SRC", help=f"where the plans are: {STORE_HELP}")
    c.add_argument("--to", dest="copy_to", required=True, metavar="DST", help=f"where they go: {STORE_HELP}")
    c.set_defaults(run_alone=run_copy)  # two stores, each from its own option


def run_copy(args: argparse.Namespace) -> int:
    urls: list[str] = [args.copy_from, args.copy_to]
    stores: list[PlanStore] = []
    try:
        source, target = from_text(args.copy_from, "--from "), from_text(args.copy_to, "--to ")
        if source.folder is not None and not source.folder.is_dir():  # a typo: never a new empty folder
            print(f"planning-mcp: no planning folder at {source.folder} to copy from", file=sys.stderr)
            return EXIT_CONFIG
        stores.append(open_for_reading(source))  # a database: connected and its schema found
        stores.append(open_for_writing(target))
        source_plans, target_plans = Actions.over(stores[0]), Actions.over(stores[1])
        report = source_plans.plans_copied(command_caller(args.command), target_plans, on_plan=_print_plan)
    except (StoreChoiceError, PlanningError, OSError) as e:
        print(f"planning-mcp: {_scrub(str(e), urls)}", file=sys.stderr)
        return EXIT_CONFIG
    finally:
        for store in stores:
            store.close()
    print(_scrub(report.summary(), urls), flush=True)
    return EXIT_OK if report.complete else EXIT_CONFIG


def _print_plan(done: PlanCopy) -> None:
    print(done.line(), flush=True)


def _scrub(text: str, urls: list[str]) -> str:
    """`text` with every URL's password hidden, however a driver's message quoted it."""
    for url in urls:
        text = text.replace(url, redact(url))
        password = DatabaseUrl.parse(url).secret
        if password:
            text = text.replace(password, "***")
    return text
