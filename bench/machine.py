"""A description of the machine the benchmarks ran on, for the report's Machine table."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import platform
import shutil
import subprocess
from importlib import metadata as importlib_metadata
from pathlib import Path


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
