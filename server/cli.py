"""The `planning-mcp` command: serve (stdio, http, sse), status, board, graph, watch,
hook, git-setup, import, export, --version. The MCP SDK is imported only when serving, so the other commands
(a Claude Code hook runs on every tool call) start fast. The exit codes and the options
every subcommand shares are server/common/cli_common.py's."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Literal

from planning_core import PlanningError, history
from planning_core.events import HookConfigError
from planning_core.render import startup_summary
from planning_core.store import PlanStore, Recoverable

from . import __version__
from .board.web import add_web_parser, run_web
from .commands.checks import add_checks_parser, run_checks
from .commands.copy import add_copy_parser, run_copy
from .commands.done import add_approve_parser, add_check_done_arguments, run_approve, run_check_done
from .commands.git_setup import add_git_setup_parser, run_git_setup
from .commands.import_export import add_import_parsers, run_export, run_import
from .commands.views import VIEW_COMMANDS, ViewError, add_parsers, run_view, status_json
from .common.cli_common import (
    EXIT_CONFIG,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_STDOUT_CLOSED,
    HOOKS_HELP,
    add_store_arguments,
    load_hooks,
)
from .common.exposure import ServeError, token_from
from .common.store_choice import (
    ROOT_PLACEHOLDER,
    StoreChoice,
    StoreChoiceError,
    choose,
    open_for_reading,
    open_for_writing,
)
from .transport.http import serve

__all__ = ["ROOT_PLACEHOLDER", "main", "parser"]

log = logging.getLogger("planning_mcp")

TRANSPORTS = {"stdio": "stdio", "http": "streamable HTTP", "sse": "SSE"}


def serving_line(transport: str, root: str, url: str | None = None) -> str:
    """The one startup line: what is served, over which transport, and where the plans are.
    `url`: for HTTP and SSE, where http.serve prints this line once the port is bound."""
    where = f"{url} (MCP over {TRANSPORTS[transport]})" if url else f"MCP over {TRANSPORTS[transport]}"
    return f"planning-mcp {__version__}: serving {where}; plans in {root} (Ctrl+C to stop)"


def summary(store: PlanStore) -> str:
    snapshots = []
    for name in store.active_plans():
        try:
            snapshots.append(store.view(name))  # read-only: no copy of every task
        except PlanningError as e:  # one unreadable plan must not stop the server
            log.warning("plan %s is left out of the summary: %s", name, e)
    return startup_summary(snapshots)


def _recover(store: PlanStore) -> None:
    """After a crash, what the store can repair (Recoverable); never fatal."""
    if isinstance(store, Recoverable):
        for line in store.recover():
            log.warning("%s", line)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="planning-mcp",
        description="An MCP server that keeps an agent's plans and tasks on disk. Without a command: serve stdio.",
    )
    p.add_argument("--version", action="version", version=f"planning-mcp {__version__}")
    add_store_arguments(p, top=True)
    p.add_argument("--hooks", metavar="FILE", help=HOOKS_HELP)
    sub = p.add_subparsers(dest="command")
    s = sub.add_parser("serve", help="serve over stdio (default), streamable HTTP or SSE")
    s.add_argument(
        "--transport",
        choices=list(TRANSPORTS),
        default="stdio",
        help="stdio: a client starts the server and talks over stdin/stdout (the default); "
        "http: streamable HTTP at http://HOST:PORT/mcp; sse: the older HTTP+SSE at /sse",
    )
    s.add_argument("--host", default="127.0.0.1", help="HTTP/SSE address (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=8000, help="HTTP/SSE port (default 8000)")
    add_store_arguments(s)
    s.add_argument("--token", help="bearer token required on every HTTP request (default: $PLANNING_MCP_TOKEN)")
    s.add_argument("--hooks", dest="sub_hooks", metavar="FILE", help=HOOKS_HELP)
    st = sub.add_parser("status", help="print the active plans and their tasks")
    add_store_arguments(st)
    st.add_argument("--json", action="store_true", help="machine-readable output")
    add_check_done_arguments(st)
    add_approve_parser(sub)
    add_checks_parser(sub)
    add_parsers(sub)
    add_web_parser(sub)
    add_copy_parser(sub)
    add_git_setup_parser(sub)
    add_import_parsers(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="planning-mcp: %(message)s")
    # While a database is away the pool logs each failed reconnect; our own errors say it once.
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    try:
        try:
            return _run(parser().parse_args(argv))
        finally:
            sys.stdout.flush()  # a reader that closed the pipe shows here, not as a traceback at exit
    except BrokenPipeError:  # `planning-mcp board | head`: the reader has what it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # what is still buffered goes nowhere at exit
        os.close(devnull)
        return EXIT_STDOUT_CLOSED
    except KeyboardInterrupt:  # Ctrl+C before serving began (stdio handles its own), or in a view
        return EXIT_INTERRUPTED


def _opens_its_store(args: argparse.Namespace) -> Callable[[argparse.Namespace, StoreChoice], int] | None:
    """The command's runner when it opens the chosen store itself."""
    if args.command == "status":
        return run_check_done if args.check_done or args.plan else None
    runners = {"web": run_web, "import": run_import, "export": run_export, "approve": run_approve, "checks": run_checks}
    return runners.get(args.command)


def _run(args: argparse.Namespace) -> int:
    # Who wrote, in the plans' history, for writes made by this command itself (import,
    # the hook); a served tool call names its session instead (tools.py).
    history.ACTOR.set(f"planning-mcp {args.command or 'serve'}")
    if args.command == "hook":  # the Claude Code hook resolves its own store and always exits 0
        return run_view(args, None)
    if args.command == "copy":
        return run_copy(args)
    try:
        choice = choose(args)
    except StoreChoiceError as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return EXIT_CONFIG
    if choice.note:
        print(f"planning-mcp: {choice.note}", file=sys.stderr)
    if args.command in VIEW_COMMANDS:
        return run_view(args, choice)
    own = _opens_its_store(args)
    if own is not None:
        return own(args, choice)
    if args.command == "git-setup":
        return run_git_setup(choice)
    store: PlanStore | None = None
    try:
        if args.command == "status":
            store = open_for_reading(choice)
            print(status_json(store) if args.json else summary(store))
            return EXIT_OK
        store = open_for_writing(choice)
        return _serve(args, choice, store)
    except (StoreChoiceError, ServeError, HookConfigError, PlanningError, ViewError) as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return EXIT_CONFIG
    except BrokenPipeError:
        raise  # stdout's reader left: main's quiet exit, not a problem with the root
    except OSError as e:
        print(
            f"planning-mcp: {e} (plans in {choice.shown}; pass --root DIR or --store URL to use another)",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    finally:
        if store is not None:
            store.close()


def _serve(args: argparse.Namespace, choice: StoreChoice, store: PlanStore) -> int:
    """Serve MCP on the opened store until stopped (stdio, or HTTP/SSE)."""
    transport = getattr(args, "transport", "stdio")
    hooks = load_hooks(getattr(args, "sub_hooks", None) or args.hooks)
    _recover(store)
    from .mcp.app import build_server  # the MCP SDK: only when serving

    server = build_server(store, hooks=hooks)
    where = choice.described
    if transport == "stdio":
        print(summary(store), file=sys.stderr)
        print(serving_line(transport, where), file=sys.stderr, flush=True)
        from .transport.stdio import run_stdio  # our transport: answers every request, bounded memory

        run_stdio(server)
        return EXIT_OK
    token = token_from(args.token)
    kind: Literal["http", "sse"] = "http" if transport == "http" else "sse"
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the Ctrl+C it served by shutting down
        serve(
            server,
            kind,
            args.host,
            args.port,
            token,
            banner=summary(store),
            ready=lambda url: serving_line(kind, where, url),  # the URL is known once bound
        )
    return EXIT_OK
