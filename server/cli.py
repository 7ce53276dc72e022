"""The `planning-mcp` command: serve (stdio, http, sse), status, board, graph, watch,
hook, --version. The MCP SDK is imported only when serving, so the other commands
(a Claude Code hook runs on every tool call) start fast."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from planning_core import FileStore, PlanningError
from planning_core.events import EventHooks, HookConfigError
from planning_core.render import startup_summary

from . import __version__
from .cli_views import VIEW_COMMANDS, add_parsers, run_view, status_json
from .http import ServeError, serve

log = logging.getLogger("planning_mcp")


def resolve_root(arg: str | None) -> Path:
    """--root, else $PLANNING_MCP_ROOT, else ./.planning where the server starts."""
    raw = arg or os.environ.get("PLANNING_MCP_ROOT") or ".planning"
    return Path(raw).expanduser().absolute()


def _bad_root(root: Path) -> ServeError:
    return ServeError(
        f"cannot use planning root {root} (not creatable or not writable); "
        "set --root DIR or PLANNING_MCP_ROOT to a writable folder"
    )


def open_store(root: Path) -> FileStore:
    store = FileStore(root)
    try:
        store.ensure_writable()
    except PlanningError:
        raise _bad_root(root) from None
    return store


def read_store(root: Path) -> FileStore:
    """A store for reading only: a missing root is simply empty and is not created."""
    store = FileStore(root)
    try:
        store.active_plans()
    except OSError:
        raise _bad_root(root) from None
    return store


def summary(store: FileStore) -> str:
    snapshots = []
    for name in store.active_plans():
        try:
            snapshots.append(store.snapshot(name))
        except PlanningError as e:  # one unreadable plan must not stop the server
            log.warning("plan %s is left out of the summary: %s", name, e)
    return startup_summary(snapshots)


def _recover(store: FileStore) -> None:
    """After a crash: drop temp files and abandoned PlanCreate staging folders, drop links
    to tasks that have no file, mirror blocks from blockedBy. Never fatal."""
    store.clean_staging()
    for name in store.active_plans():
        try:
            repaired = store.repair(name)
        except (PlanningError, OSError) as e:
            log.warning("could not check plan %s: %s", name, e)
            continue
        if repaired.dropped:
            links = "; ".join(f"#{t} -> {', '.join(f'#{m}' for m in ms)}" for t, ms in repaired.dropped.items())
            log.warning("plan %s: dropped links to tasks that have no file: %s", name, links)
        if repaired.blocks:
            log.warning("plan %s: repaired blocks of tasks %s", name, repaired.blocks)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="planning-mcp",
        description="An MCP server that keeps an agent's plans and tasks on disk. Without a command: serve stdio.",
    )
    p.add_argument("--version", action="version", version=f"planning-mcp {__version__}")
    p.add_argument("--root", help="planning folder (default: $PLANNING_MCP_ROOT, else ./.planning)")
    p.add_argument("--hooks", help="event hooks file (JSON; default: $PLANNING_MCP_HOOKS)")
    sub = p.add_subparsers(dest="command")
    s = sub.add_parser("serve", help="serve over stdio (default), streamable HTTP or SSE")
    s.add_argument("--transport", choices=["stdio", "http", "sse"], default="stdio")
    s.add_argument("--host", default="127.0.0.1", help="HTTP/SSE address (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=8000, help="HTTP/SSE port (default 8000)")
    s.add_argument("--root", dest="sub_root", help="planning folder")
    s.add_argument("--token", help="bearer token required on every HTTP request (default: $PLANNING_MCP_TOKEN)")
    s.add_argument("--hooks", dest="sub_hooks", help="event hooks file (JSON; default: $PLANNING_MCP_HOOKS)")
    st = sub.add_parser("status", help="print the active plans and their tasks")
    st.add_argument("--root", dest="sub_root", help="planning folder")
    st.add_argument("--json", action="store_true", help="machine-readable output")
    add_parsers(sub)
    return p


def load_hooks(path: str | None) -> EventHooks | None:
    try:
        hooks = EventHooks.load(path)
    except HookConfigError as e:
        raise ServeError(str(e)) from None
    if hooks:
        events = ", ".join(f"{e} ({len(c)})" for e, c in hooks.commands.items() if c)
        log.warning("event hooks from %s: %s", hooks.source, events)
    return hooks


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="planning-mcp: %(message)s")
    args = parser().parse_args(argv)
    root = resolve_root(getattr(args, "sub_root", None) or args.root)
    if args.command in VIEW_COMMANDS:
        return run_view(args, root)
    try:
        if args.command == "status":
            reader = read_store(root)
            print(status_json(reader) if args.json else summary(reader))
            return 0
        store = open_store(root)
        transport = getattr(args, "transport", "stdio")
        hooks = load_hooks(getattr(args, "sub_hooks", None) or args.hooks)
        _recover(store)
        from .app import build_server  # the MCP SDK: only when serving

        server = build_server(root, hooks=hooks)
        if transport == "stdio":
            print(summary(store), file=sys.stderr, flush=True)
            from .stdio import run_stdio  # our transport: answers every request, bounded memory

            run_stdio(server)
        else:
            token = args.token or os.environ.get("PLANNING_MCP_TOKEN") or None
            kind: Literal["http", "sse"] = "http" if transport == "http" else "sse"
            serve(server, kind, args.host, args.port, token, banner=summary(store))
    except ServeError as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return 2
    except PlanningError as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"planning-mcp: {e} (planning root: {root}; pass --root DIR to use another folder)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0
