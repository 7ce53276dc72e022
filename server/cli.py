"""The `planning-mcp` command: serve (stdio, http, sse), status, board, graph, watch,
hook, --version. The MCP SDK is imported only when serving, so the other commands
(a Claude Code hook runs on every tool call) start fast.

Exit codes: 0 done (also: the server stopped by Ctrl+C once the requests it had read were
answered); 1 board, graph or watch could not show what was asked (no such plan, or an
ambiguous part of a name); 2 the command cannot run as configured (a root that is a placeholder,
missing for a read command, or not writable; a port in use; a bad hooks file; argparse's usage errors); 130
stopped at once (a second Ctrl+C, or Ctrl+C while starting); 141 stdout was closed by its
reader (`| head`), as a program ended by SIGPIPE reports."""

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
from .board.web import add_web_parser, run_web
from .cli_views import ROOT_HELP, VIEW_COMMANDS, ViewError, add_parsers, existing_store, run_view, status_json
from .http import ServeError, serve, token_from

log = logging.getLogger("planning_mcp")

ROOT_ENV = "PLANNING_MCP_ROOT"
ROOT_PLACEHOLDER = "/ABSOLUTE/PATH"  # README's and mcp.json.example's text, to be replaced by the user
CONFIG_ERROR = 2
INTERRUPTED = 130  # 128 + SIGINT
STDOUT_CLOSED = 141  # 128 + SIGPIPE
TRANSPORTS = {"stdio": "stdio", "http": "streamable HTTP", "sse": "SSE"}


def resolve_root(arg: str | None) -> Path:
    """--root, else $PLANNING_MCP_ROOT, else ./.planning where the server starts. A root a
    client config left unedited (a placeholder, an unexpanded variable, a Windows path) is
    refused: taken as given it would silently become a new folder somewhere unexpected."""
    env = os.environ.get(ROOT_ENV)
    raw, given = (arg, "--root ") if arg else (env, f"{ROOT_ENV}=") if env else (".planning", "")
    problem = root_problem(raw)
    if problem:
        example = Path.home() / "myproject" / ".planning"
        raise ServeError(
            f"{given}{raw} {problem}; in your MCP client's config, write the absolute path of "
            f"your project's .planning folder instead (e.g. {example})"
        )
    return Path(raw).expanduser().absolute()


def root_problem(raw: str) -> str | None:
    if "${" in raw:
        return "holds a ${...} variable that your MCP client did not expand"
    if ROOT_PLACEHOLDER in raw:
        return f"is the example's placeholder ({ROOT_PLACEHOLDER} was never replaced)"
    if "\\" in raw and os.sep == "/":
        return "holds a backslash (a Windows path?), which here would name one folder, backslashes and all"
    return None


def serving_line(transport: str, root: Path, url: str | None = None) -> str:
    """The one startup line: what is served, over which transport, and the plans' folder.
    `url`: for HTTP and SSE, where http.serve prints this line once the port is bound."""
    where = f"{url} (MCP over {TRANSPORTS[transport]})" if url else f"MCP over {TRANSPORTS[transport]}"
    return f"planning-mcp {__version__}: serving {where}; plans in {root} (Ctrl+C to stop)"


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
    """A store for reading only: the root must exist (a typo in --root is an error, never a
    new empty folder), by the same rule and message as board, graph and watch."""
    store = existing_store(root)
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


HOOKS_HELP = "event hooks file (JSON; default: $PLANNING_MCP_HOOKS)"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="planning-mcp",
        description="An MCP server that keeps an agent's plans and tasks on disk. Without a command: serve stdio.",
    )
    p.add_argument("--version", action="version", version=f"planning-mcp {__version__}")
    p.add_argument("--root", metavar="DIR", help=ROOT_HELP)
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
    s.add_argument("--root", dest="sub_root", metavar="DIR", help=ROOT_HELP)
    s.add_argument("--token", help="bearer token required on every HTTP request (default: $PLANNING_MCP_TOKEN)")
    s.add_argument("--hooks", dest="sub_hooks", metavar="FILE", help=HOOKS_HELP)
    st = sub.add_parser("status", help="print the active plans and their tasks")
    st.add_argument("--root", dest="sub_root", metavar="DIR", help=ROOT_HELP)
    st.add_argument("--json", action="store_true", help="machine-readable output")
    add_parsers(sub)
    add_web_parser(sub)
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
    try:
        try:
            return _run(parser().parse_args(argv))
        finally:
            sys.stdout.flush()  # a reader that closed the pipe shows here, not as a traceback at exit
    except BrokenPipeError:  # `planning-mcp board | head`: the reader has what it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # what is still buffered goes nowhere at exit
        os.close(devnull)
        return STDOUT_CLOSED
    except KeyboardInterrupt:  # Ctrl+C before serving began (stdio handles its own), or in a view
        return INTERRUPTED


def _run(args: argparse.Namespace) -> int:
    if args.command == "hook":  # the Claude Code hook resolves its own root and always exits 0
        return run_view(args, Path.cwd())
    try:
        root = resolve_root(getattr(args, "sub_root", None) or args.root)
    except ServeError as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return CONFIG_ERROR
    if args.command in VIEW_COMMANDS:
        return run_view(args, root)
    if args.command == "web":
        return run_web(args, root)
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
            print(summary(store), file=sys.stderr)
            print(serving_line(transport, root), file=sys.stderr, flush=True)
            from .stdio import run_stdio  # our transport: answers every request, bounded memory

            run_stdio(server)
        else:
            token = token_from(args.token)
            kind: Literal["http", "sse"] = "http" if transport == "http" else "sse"
            try:
                serve(
                    server,
                    kind,
                    args.host,
                    args.port,
                    token,
                    banner=summary(store),
                    ready=lambda url: serving_line(kind, root, url),  # the URL is known once bound
                )
            except KeyboardInterrupt:  # uvicorn re-raises the Ctrl+C it served by shutting down gracefully
                return 0
    except (ServeError, PlanningError, ViewError) as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return CONFIG_ERROR
    except BrokenPipeError:
        raise  # stdout's reader left: main's quiet exit, not a problem with the root
    except OSError as e:
        print(f"planning-mcp: {e} (planning root: {root}; pass --root DIR to use another folder)", file=sys.stderr)
        return CONFIG_ERROR
    return 0
