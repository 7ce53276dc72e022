"""A description of the machine the benchmarks ran on, for the report's Machine table."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import platform
import shutil
import subprocess
import time
from importlib import metadata as importlib_metadata
from pathlib import Path

# A run is a result only on a quiet machine: at most this share of its CPU busy before it starts.
QUIET_BUSY_SHARE = 0.15
LOADED = "NOT A RESULT"  # how a loaded run's report begins its machine line and marks its targets


def busy_share(seconds: float = 2.0) -> float:
    """The share of the machine's CPU time spent busy over `seconds` (/proc/stat), 0 where unknown."""

    def ticks() -> tuple[int, int]:
        with contextlib.suppress(OSError, ValueError, IndexError):
            values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
            idle = values[3] + values[4]  # idle + iowait
            return sum(values) - idle, sum(values)
        return 0, 0

    busy0, total0 = ticks()
    time.sleep(seconds)
    busy1, total1 = ticks()
    return (busy1 - busy0) / (total1 - total0) if total1 > total0 else 0.0


def quiet_note(share: float) -> str:
    """The report's line on how busy the machine was before the runs."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if share <= QUIET_BUSY_SHARE:
        return f"The machine before the runs: {share:.0%} busy (load {load}): a quiet machine."
    return (
        f"{LOADED}: the machine was {share:.0%} busy before the runs (load {load}; a result needs at most "
        f"{QUIET_BUSY_SHARE:.0%}): these figures show the code works under load, not how fast it is."
    )


def machine() -> dict[str, str]:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    os_name = platform.platform()
    with contextlib.suppress(OSError):
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                os_name = f"{line.split('=', 1)[1].strip(chr(34))} ({platform.system()} {platform.release()})"
    # node matters because the peers run on it.
    node = shutil.which("node")
    node_v = "absent"
    if node:
        with contextlib.suppress(Exception):
            node_v = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    mem = "?"
    with contextlib.suppress(OSError, ValueError, IndexError):
        kb = int(Path("/proc/meminfo").read_text().split("\n")[0].split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    return {
        "CPU": cpu,
        "cores": str(os.cpu_count()),
        "memory": mem,
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "OS": os_name,
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "mcp SDK": importlib_metadata.version("mcp"),
        "node": node_v,
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
    }
