"""Starting and connecting to the servers under test, and reading their /proc figures.

Every server (ours, the echo floor) is a real subprocess driven by the real SDK client
(`mcp.Client`) over stdio in the 2025 `legacy` mode (initialize handshake): the peers
speak only that, and on stdio it is as fast as `auto` for ours and the floor, so one
mode serves everyone. The client's response cache is off."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from mcp import Client, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from bench.peers.peers import result_text

REPO = Path(__file__).resolve().parent.parent
ECHO_SERVER = REPO / "bench" / "echo_server.py"
CLIENT_MODE = "legacy"


class BenchError(RuntimeError):
    pass


def ours_params(root: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "server", "--root", str(root)], cwd=str(REPO))


def ours_store_params(url: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "server", "--store", url], cwd=str(REPO))


def echo_params(tag: str) -> StdioServerParameters:
    # The tag is ignored by the server; it makes the process findable in /proc.
    return StdioServerParameters(command=sys.executable, args=[str(ECHO_SERVER), "--bench-tag", tag], cwd=str(REPO))


def connect(params: StdioServerParameters, errlog: TextIO) -> Client:
    return Client(stdio_client(params, errlog=errlog), mode=CLIENT_MODE, cache=None)


def processes() -> Iterator[tuple[int, list[bytes]]]:
    """Every other process's pid and command line (from /proc; gone ones skipped)."""
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        yield int(entry.name), argv


def find_pid(marker: str) -> int | None:
    """The pid of the process whose command line contains `marker` (not us)."""
    return next((pid for pid, argv in processes() if marker.encode() in argv), None)


def vm_kb(pid: int | None, key: str = "VmHWM") -> int | None:
    """A /proc/<pid>/status memory figure in KiB (default: peak RSS), or None if gone."""
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def check(result: CallToolResult, what: str) -> CallToolResult:
    if result.is_error:
        raise BenchError(f"{what}: {result_text(result)[:300]}")
    return result
