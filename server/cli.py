"""The `planning-mcp` command: serve (stdio, http, sse), status, board, graph, watch, log,
hook, approve, checks, web, copy, git-setup, import, export, --version. This module builds
the parser from each command's own module (server/commands/, the board's server/board/web.py,
Claude Code's server/claude_code/claude_hook.py), and each command names what runs it
(set_defaults): `run`, given the store the options chose, or `run_alone` for a command that
finds its own stores. The MCP SDK is imported only when serving, so the other commands (a
Claude Code hook runs on every tool call) start fast. The exit codes and the options every
subcommand shares are server/common/cli_common.py's."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence

from . import __version__
from .board.web import add_web_parser
from .claude_code.claude_hook import add_hook_parser
from .commands.checks import add_checks_parser
from .commands.copy import add_copy_parser
from .commands.done import add_approve_parser
from .commands.git_setup import add_git_setup_parser
from .commands.import_export import add_import_parsers
from .commands.serve import add_serve_parser, run_serve
from .commands.status import add_status_parser
from .commands.views import add_parsers as add_view_parsers
from .common.cli_common import EXIT_CONFIG, EXIT_INTERRUPTED, EXIT_STDOUT_CLOSED, HOOKS_HELP, add_store_arguments
from .common.store_choice import ROOT_PLACEHOLDER, StoreChoice, StoreChoiceError, choose

__all__ = ["ROOT_PLACEHOLDER", "main", "parser"]

Run = Callable[[argparse.Namespace, StoreChoice], int]
RunAlone = Callable[[argparse.Namespace], int]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="planning-mcp",
        description="An MCP server that keeps an agent's plans and tasks on disk. Without a command: serve stdio.",
    )
    p.add_argument("--version", action="version", version=f"planning-mcp {__version__}")
    add_store_arguments(p, top=True)
    p.add_argument("--hooks", metavar="FILE", help=HOOKS_HELP)
    p.set_defaults(run=run_serve)  # no command: serve stdio
    sub = p.add_subparsers(dest="command")
    add_serve_parser(sub)
    add_status_parser(sub)
    add_approve_parser(sub)
    add_checks_parser(sub)
    add_view_parsers(sub)
    add_hook_parser(sub)
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


def _run(args: argparse.Namespace) -> int:
    run_alone: RunAlone | None = getattr(args, "run_alone", None)
    if run_alone is not None:
        return run_alone(args)
    try:
        choice = choose(args)
    except StoreChoiceError as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return EXIT_CONFIG
    if choice.note:
        print(f"planning-mcp: {choice.note}", file=sys.stderr)
    run: Run = args.run
    return run(args, choice)
