"""`python -m planning_core.stores.files driver BASE OURS THEIRS PATH` (git's merge driver) and
`... hook NAME ARGS` (git's hooks): the commands `planning-mcp git-setup` writes into the
repository. Kept apart from gitmerge so the module is not run while the package imports it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable

from .merge.gitmerge import run_driver, run_hook, run_strategy


def strategy() -> int:
    """The `git-merge-planning-mcp` command git runs for `git merge -s planning-mcp`."""
    try:
        return run_strategy(sys.argv[1:])
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"planning-mcp: the merge strategy failed: {e}", file=sys.stderr)
        return 2


def main(argv: Iterable[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 5 and args[0] == "driver":
        return run_driver(*args[1:])
    if args and args[0] == "hook" and len(args) >= 2:
        try:
            return run_hook(args[1], args[2:])
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"planning-mcp: the plans were not fixed after this {args[1]}: {e}", file=sys.stderr)
            return 0  # a post- hook cannot undo the commit; said so instead
    print("usage: python -m planning_core.stores.files driver BASE OURS THEIRS PATH | hook NAME", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
