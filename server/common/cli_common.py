"""What every `planning-mcp` subcommand shares: the exit codes, the --store/--root options
(store_choice's, which reads them back) and the event hooks file. Subcommand modules
import these from here and never from cli.py, which imports them all.

Exit codes: 0 done (also: the server stopped by Ctrl+C once the requests it had read were
answered); 1 board, graph or watch could not show what was asked (no such plan, or an
ambiguous part of a name); 2 the command cannot run as configured (a root that is a placeholder,
missing for a read command, or not writable; a port in use; a bad hooks file; argparse's usage errors); 130
stopped at once (a second Ctrl+C, or Ctrl+C while starting); 141 stdout was closed by its
reader (`| head`), as a program ended by SIGPIPE reports."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .store_choice import add_store_arguments

if TYPE_CHECKING:  # loaded by load_hooks: the Claude Code hook imports this module for EXIT_OK
    from planning_core.caller import Caller
    from planning_core.events import EventHooks

__all__ = [
    "EXIT_CONFIG",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_STDOUT_CLOSED",
    "EXIT_VIEW",
    "HOOKS_HELP",
    "add_store_arguments",
    "command_caller",
    "command_writer",
    "load_hooks",
]

EXIT_OK = 0
EXIT_VIEW = 1  # board, graph or watch cannot show what was asked
EXIT_CONFIG = 2  # cannot run as configured
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_STDOUT_CLOSED = 141  # 128 + SIGPIPE

HOOKS_HELP = "event hooks file (JSON; default: $PLANNING_MCP_HOOKS)"


def load_hooks(path: str | None) -> EventHooks | None:
    """The hooks file, logged once; raises HookConfigError (a bad file cannot run: exit 2)."""
    import logging  # here: the Claude Code hook imports this module and logs nothing

    from planning_core.events import EventHooks

    hooks = EventHooks.load(path)
    if hooks:
        events = ", ".join(f"{e} ({len(c)})" for e, c in hooks.commands.items() if c)
        logging.getLogger("planning_mcp").warning("event hooks from %s: %s", hooks.source, events)
    return hooks


def command_writer(command: str | None) -> str:
    """Who a command's own writes are by, in the plans' history: `planning-mcp <command>`
    (a served tool call names its session instead: server/mcp/state.py)."""
    return f"planning-mcp {command or 'serve'}"


def command_caller(command: str | None) -> Caller:
    """The Caller a command passes to the core: its name, and a session of its own."""
    from planning_core.caller import Caller
    from planning_core.session import Session

    return Caller(command_writer(command), Session())
