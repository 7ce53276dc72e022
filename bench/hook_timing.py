"""What the hook benches share: `planning-mcp hook <event>` run as the Claude Code plugin runs
it (its launcher bin/planning-mcp, which finds the installed `planning-mcp` on PATH; a new
process, the payload on stdin), timed beside `python -c pass` with the same interpreter in the
same run (the floor any Python hook pays), and each case's median and p95 in milliseconds."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

LAUNCHER = Path(__file__).resolve().parents[1] / "bin" / "planning-mcp"
BARE = "python -c pass"
Figures = dict[str, dict[str, float]]


def hook_env() -> dict[str, str]:
    """The environment a hook runs in: no PLANNING_MCP_* of the caller's, and this
    interpreter's bin (where planning-mcp is installed) first on PATH, for the launcher."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANNING_MCP_")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def run_hook(event: str, payload: dict[str, object], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    """One hook call through the launcher: (wall milliseconds, what it printed)."""
    return timed([str(LAUNCHER), "hook", event], payload, env, cwd)


def run_bare(env: dict[str, str], cwd: Path) -> float:
    return timed([sys.executable, "-c", "pass"], {}, env, cwd)[0]


def timed(command: list[str], payload: dict[str, object], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        command, input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=cwd, check=True
    )
    return (time.perf_counter() - started) * 1000, done.stdout


def figures(results: dict[str, list[float]]) -> Figures:
    """Each case's median and p95, and its median over the bare start's (BARE among the cases)."""
    out: Figures = {}
    for case, times in results.items():
        ordered = sorted(times)
        out[case] = {
            "median_ms": round(statistics.median(ordered), 1),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 1),
        }
    for case, f in out.items():
        if case != BARE:
            f["over_bare_ms"] = round(f["median_ms"] - out[BARE]["median_ms"], 1)
    return out


def rows(found: Figures) -> list[list[str]]:
    """The table's rows: case, median, p95, median over bare."""
    return [
        [case, f"{f['median_ms']:.1f}", f"{f['p95_ms']:.1f}", f"{f['over_bare_ms']:.1f}" if "over_bare_ms" in f else ""]
        for case, f in found.items()
    ]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(
    doc: str,
    measure: Callable[[int, int], Figures],
    section: Callable[[Figures, int, int], str],
    runs: int,
) -> None:
    """A bench's command line: --runs, --tasks (the plan's size), --json."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--runs", type=int, default=runs)
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--json", action="store_true", help="the figures as JSON instead of the section")
    args = parser.parse_args()
    found = measure(args.runs, args.tasks)
    print(json.dumps(found, indent=2) if args.json else section(found, args.runs, args.tasks))
