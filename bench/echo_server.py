"""The floor: the smallest MCPServer on the same SDK, served over stdio.

`echo` is the floor every figure of planning-mcp in BENCHMARKS.md is divided by
(measured in the same run, so noise from a busy machine mostly cancels out).
`durable_write` is a write's floor: the disk work the contract requires of a write
and nothing else, run the way our server runs its core (a sync tool: the SDK calls it
in its worker thread). `replay` is an answer's floor: it gives back a result of ours
saved by the harness (a TaskList page), so the cost of its size alone is measured."""

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

# planning_core's own atomic write (so the system calls are exactly ours), loaded from its
# file alone: importing the package would add its start-up time and memory to the floor's,
# which the start-up and memory ratios divide by. The module needs only the standard library.
ATOMICFILE = Path(__file__).resolve().parent.parent / "planning_core" / "fileio" / "atomic.py"


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_floor_atomicfile", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


replace_many = _load(ATOMICFILE).replace_many

# A task file's size (a seeded task's Task.to_json() is 315-341 bytes) and a .highwatermark's.
TASK_FILE = b"{" + b" " * 337 + b"}\n"
HIGHWATERMARK = b"1000\n"

server = MCPServer("echo", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def durable_write(folder: str, files: int) -> str:
    """Durably replace `files` files of a plan folder, as one write does: task_1.json, then
    .highwatermark (a TaskCreate's two), then task_2.json, ...; each a temp file written and
    fsynced, renamed over its target, then one fsync of the folder."""
    names = ["task_1.json", ".highwatermark", *(f"task_{k}.json" for k in range(2, files))][:files]
    replace_many((os.path.join(folder, n), HIGHWATERMARK if n == ".highwatermark" else TASK_FILE) for n in names)
    return "ok"


_saved: dict[str, tuple[str, Any]] = {}


@server.tool()
def replay(path: str) -> CallToolResult:
    """Answer with the tool result saved at `path` (JSON: its text and structured content, read
    once): what carrying that very answer costs an SDK server that does no work for it."""
    if path not in _saved:
        saved = json.loads(Path(path).read_text(encoding="utf-8"))
        _saved[path] = (saved["text"], saved["structured"])
    text, structured = _saved[path]
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


if __name__ == "__main__":
    server.run("stdio")
