"""`planning-mcp serve`, and `planning-mcp` with no command: MCP on the chosen store over
stdio (the default), streamable HTTP or SSE, after the startup summary. The MCP SDK is
imported only here, once serving begins, so the other commands start fast."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from typing import Any, Literal

from planning_core.actions import Actions
from planning_core.caller import Caller
from planning_core.store import PlanStore

from .. import __version__
from ..common.cli_common import EXIT_OK, HOOKS_HELP, add_store_arguments, command_caller, load_hooks
from ..common.exposure import token_from
from ..common.store_choice import StoreChoice, open_for_writing
from ..transport.http import serve
from .status import summary
from .store_run import run_on_store

log = logging.getLogger("planning_mcp")

TRANSPORTS = {"stdio": "stdio", "http": "streamable HTTP", "sse": "SSE"}


def serving_line(transport: str, root: str, url: str | None = None) -> str:
    """The one startup line: what is served, over which transport, and where the plans are.
    `url`: for HTTP and SSE, where http.serve prints this line once the port is bound."""
    where = f"{url} (MCP over {TRANSPORTS[transport]})" if url else f"MCP over {TRANSPORTS[transport]}"
    return f"planning-mcp {__version__}: serving {where}; plans in {root} (Ctrl+C to stop)"


def _recover(actions: Actions, caller: Caller) -> None:
    """After a crash, what the store can repair (Actions.recovered); never fatal."""
    for line in actions.recovered(caller):
        log.warning("%s", line)


def add_serve_parser(sub: Any) -> None:
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
    s.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace, choice: StoreChoice) -> int:
    return run_on_store(choice, open_for_writing, lambda store: _serve(args, choice, store))


def _serve(args: argparse.Namespace, choice: StoreChoice, store: PlanStore) -> int:
    """Serve MCP on the opened store until stopped (stdio, or HTTP/SSE)."""
    transport = getattr(args, "transport", "stdio")
    hooks = load_hooks(getattr(args, "sub_hooks", None) or args.hooks)
    actions = Actions.over(store)  # the summary's reads; the server makes its own
    _recover(actions, command_caller(args.command))
    from ..mcp.app import build_server  # the MCP SDK: only when serving

    server = build_server(store, hooks=hooks)
    where = choice.described
    if transport == "stdio":
        print(summary(actions), file=sys.stderr)
        print(serving_line(transport, where), file=sys.stderr, flush=True)
        from ..transport.stdio import run_stdio  # our transport: answers every request, bounded memory

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
            banner=summary(actions),
            ready=lambda url: serving_line(kind, where, url),  # the URL is known once bound
        )
    return EXIT_OK
