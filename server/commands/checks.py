"""`planning-mcp checks` (the checks defined, and whether they may run) and
`planning-mcp checks trust` (the person running the server trusts the check file as it is
now: planning_core/verify.py)."""

from __future__ import annotations

import argparse
import sys

from planning_core.safetext import escape
from planning_core.stores import is_database_url
from planning_core.verify import CheckFile, ChecksUnavailable

from ..common.cli_common import EXIT_CONFIG, EXIT_OK, add_store_arguments
from ..common.store_choice import StoreChoice


def add_checks_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    c = sub.add_parser(
        "checks",
        help="list the checks of .planning/checks.toml; `checks trust` lets them run as the file is now",
    )
    add_store_arguments(c)
    c.add_argument("action", nargs="?", choices=["list", "trust"], default="list")
    c.set_defaults(run=run_checks)


def check_file(choice: StoreChoice) -> CheckFile:
    return CheckFile.of_root(None if is_database_url(choice.url) else choice.folder)


def run_checks(args: argparse.Namespace, choice: StoreChoice) -> int:
    checks = check_file(choice)
    try:
        if args.action == "trust":
            found, defined = checks.trust()
            print(f"Trusted {checks.path} (sha256 {found[:12]}): these commands may now run in {checks.project}:")
        else:
            defined = checks.load()
            state = "trusted" if checks.trusted() else "NOT trusted: review it, then run `planning-mcp checks trust`"
            print(f"{checks.path} ({state}); commands run in {checks.project}:")
    except ChecksUnavailable as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return EXIT_CONFIG
    for check in defined.values():
        print(f"  {escape(check.name)}: {escape(check.command)} (timeout {check.timeout:g} s)")
    return EXIT_OK
