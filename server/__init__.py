"""The MCP layer of planning-mcp: tools, resources and prompts over planning_core."""

import sys

__version__ = "0.1.0"

# The systems it runs on: POSIX file locks (fcntl.flock), pread, O_DIRECTORY (a folder's fsync),
# process groups (killpg) and the OS file events (inotify; FSEvents through watchfiles). Elsewhere
# it stops here, before any of that is imported, with one line (docs/decisions.md).
SUPPORTED_SYSTEMS = {"linux": "Linux", "darwin": "macOS"}
if not sys.platform.startswith(tuple(SUPPORTED_SYSTEMS)):
    raise SystemExit(
        f"planning-mcp: runs on {' and '.join(SUPPORTED_SYSTEMS.values())} only, not {sys.platform}"
        " (on Windows, run it inside WSL)"
    )
