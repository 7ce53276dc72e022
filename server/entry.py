"""The `planning-mcp` command's entry point. `hook` goes straight to server/claude_code/claude_hook.py:
Claude Code runs it at every prompt and tool call and waits for it, so it loads only what
the hook needs (no MCP SDK, no server, no other command). Everything else is server/cli.py."""

from __future__ import annotations

import sys
from collections.abc import Sequence

HOOK = "hook"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == [HOOK] and len(args) <= 2 and not any(a.startswith("-") for a in args):
        # The plugin's command line (`hook EVENT`), read without argparse; any other one
        # (options, help) goes through the parser below.
        from .claude_code.claude_hook import main as hook_main

        return hook_main(args[1] if len(args) == 2 else None, None)
    if args[:1] == [HOOK]:
        import argparse

        from .claude_code.claude_hook import add_hook_parser, run_hook
        from .common.store_choice import add_store_arguments

        parser = argparse.ArgumentParser(prog="planning-mcp")
        add_store_arguments(parser, top=True)
        add_hook_parser(parser.add_subparsers(dest="command"))
        return run_hook(parser.parse_args(args))
    from .cli import main as cli_main

    return cli_main(args)
