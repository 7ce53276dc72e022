"""planning-mcp's wheel, built the one way the install tests build it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.procs import REPO


def build_wheel(tmp: Path, timeout: float) -> Path:
    """The wheel `pip wheel` builds (offline, no deps, no build isolation) from a copy of the
    source tree in `tmp`, so nothing in the checkout (caches, build folders) reaches it."""
    src = tmp / "src"
    src.mkdir()
    for item in ("pyproject.toml", "README.md", "LICENSE", "planning_core", "server"):
        path = REPO / item
        (shutil.copytree if path.is_dir() else shutil.copy)(path, src / item)
    dist = tmp / "dist"
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(src)]
    done = subprocess.run(build, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return next(dist.glob("planning_mcp-*.whl"))
