"""`planning-mcp web`: the board alone in the browser, on its own port.

Read-only unless `--actions`: any program on this machine can load a loopback page, and
a board that starts and completes tasks on a click is a way to change plans that no agent
asked for. With `--actions` every change goes through TaskUpdate (planning_core.actions),
as an agent's call would, and each refusal is shown with its message."""

from __future__ import annotations

import argparse
import contextlib
import sys
import webbrowser
from typing import Any
from urllib.parse import urlencode

from ..common.cli_common import EXIT_CONFIG, EXIT_OK, add_store_arguments, command_caller, load_hooks
from ..common.store_choice import StoreChoice

DEFAULT_PORT = 8080


def add_web_parser(sub: Any) -> None:
    w = sub.add_parser("web", help="the live task board in your browser (http://127.0.0.1:8080/board)")
    add_store_arguments(w)
    w.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1; any other needs --token)")
    w.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks one)")
    w.add_argument("--token", help="required on every request (default: $PLANNING_MCP_TOKEN)")
    w.add_argument("--open", action="store_true", help="open the board in the default browser")
    w.add_argument(
        "--actions",
        action="store_true",
        help="let the page start, complete, reopen and claim tasks (through TaskUpdate) and approve gated ones; "
        "off: read-only",
    )
    w.set_defaults(run=run_web)


def run_web(args: argparse.Namespace, choice: StoreChoice) -> int:
    """Serve until Ctrl+C. Exit 2 when it cannot start (no such root, no token off loopback,
    port in use), with the reason on one line."""
    import uvicorn

    from planning_core.actions import Actions
    from planning_core.events import HookConfigError

    from ..common.exposure import ServeError, bind, check_token, token_from, url_host
    from ..common.store_choice import StoreChoiceError, open_for_reading
    from .routes import BASE, BoardSite

    token = token_from(args.token)
    try:
        store = open_for_reading(choice)
        check_token(args.host, token)
        hooks = None
        if args.actions:
            hooks = load_hooks(args.hooks)
        sock = bind(args.host, args.port)
    except (ServeError, StoreChoiceError, HookConfigError) as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return EXIT_CONFIG
    port = int(sock.getsockname()[1])
    actions = Actions.over(store, hooks) if args.actions else None
    site = BoardSite(store, args.host, port, token, actions, command_caller(args.command))
    url = f"http://{url_host(args.host)}:{port}{BASE}"
    mode = "actions on" if actions else "read-only"
    line = f"planning-mcp: the board of {choice.described} is at {url} ({mode}; Ctrl+C to stop)"
    print(line, file=sys.stderr, flush=True)
    if args.open:
        webbrowser.open(f"{url}?{urlencode({'token': token})}" if token else url)  # a token may hold & or #
    server = uvicorn.Server(uvicorn.Config(site, log_level="warning", lifespan="off"))
    site.stopping = lambda: server.should_exit  # open pages' event streams end, so Ctrl+C does not wait
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl+C: uvicorn has shut down gracefully
        server.run(sockets=[sock])
    return EXIT_OK
