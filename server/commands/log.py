"""`planning-mcp log [PLAN]`: the plans' history on the command line, newest first, a page
at a time (`--limit`, `--cursor` from the last line), or as JSON (`--json`)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from planning_core.actions import Actions
from planning_core.history import PAGE_DEFAULT, PAGE_MAX, Logged
from planning_core.rendering import timeline
from planning_core.safetext import escape_json


def add_parser(sub: Any, add_store_arguments: Any) -> argparse.ArgumentParser:
    g: argparse.ArgumentParser = sub.add_parser("log", help="the plans' history: who changed what, newest first")
    g.add_argument("plan", nargs="?", help="plan name or a unique part of it (default: every active plan)")
    g.add_argument(
        "--limit", type=int, default=PAGE_DEFAULT, metavar="N", help=f"events per page (default {PAGE_DEFAULT})"
    )
    g.add_argument("--cursor", help="the cursor the previous page's last line gave (one plan only)")
    g.add_argument("--json", action="store_true", help="machine-readable output")
    add_store_arguments(g)
    return g


def _as_json(items: list[Logged], cursor: str | None) -> str:
    rows = [{"plan": i.plan, "at": i.at, "by": i.by, **i.event.to_dict(), "cursor": i.cursor} for i in items]
    return escape_json(json.dumps({"events": rows, "nextCursor": cursor}, ensure_ascii=False, indent=2))


def show(args: argparse.Namespace, actions: Actions, plans: list[str]) -> str:
    """The text to print. Raises ValueError for arguments that cannot be met, PlanningError
    as the store does (an unknown plan, a cursor it never gave)."""
    if not 1 <= args.limit <= PAGE_MAX:
        raise ValueError(f"--limit must be between 1 and {PAGE_MAX}")
    if args.plan:
        items, cursor = actions.history_page(plans[0], args.limit, args.cursor)
    elif args.cursor:
        raise ValueError("--cursor pages one plan's log: name the plan too")
    else:
        items, cursor = actions.latest_history(args.limit), None
    if args.json:
        return _as_json(items, cursor)
    if not items:
        return "No history yet." if args.plan else "No history in the active plans yet."
    lines = [timeline.line(i, with_plan=not args.plan) for i in items]
    if cursor:
        lines.append(f"(more: planning-mcp log {plans[0]} --cursor {cursor})")
    return "\n".join(lines)
