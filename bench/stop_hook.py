"""What Claude Code's Stop hook costs per stop: `planning-mcp hook Stop` run as Claude Code
runs it (a new process, the payload on stdin), on a file store.

    python -m bench.stop_hook [--runs 30] [--tasks 50]

Three cases, each `runs` times, on a plan of `tasks` tasks in a chain: a stop with the
first task ready (blocked, the session's state written), a stop while another agent holds it
(let through, saying so), and a project with no planning folder (the hook does nothing).
Beside them `python -c pass` with the same interpreter: the floor any Python hook pays.
Figures: median and p95 wall time in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from planning_core import Planner
from planning_core.stores.files import FileStore


def _run(command: list[str], payload: dict[str, object], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, input=json.dumps(payload), capture_output=True, text=True, env=env, check=True)
    return (time.perf_counter() - started) * 1000, done.stdout


def _figures(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 1),
    }


def measure(runs: int, tasks: int) -> dict[str, dict[str, float]]:
    script = str(Path(sys.executable).parent / "planning-mcp")
    env = {**os.environ, "PLANNING_MCP_STOP_BLOCKS": "3"}
    env.pop("PLANNING_MCP_ROOT", None)
    results: dict[str, list[float]] = {"blocked": [], "let through": [], "no planning folder": [], "python -c pass": []}
    with tempfile.TemporaryDirectory() as tmp:
        ready, held, bare = Path(tmp) / "ready", Path(tmp) / "held", Path(tmp) / "bare"
        bare.mkdir()
        specs = [{"subject": f"Step {i}", "blockedBy": [i - 1] if i > 1 else []} for i in range(1, tasks + 1)]
        for project in (ready, held):
            store = FileStore(project / ".planning")
            name = Planner(store).create_plan("Bench", "a", "b", tasks=specs).name
            if project == held:
                Planner(store).update_task(name, 1, status="in_progress", owner="another-agent")
            store.close()
        cases = [
            ("blocked", ready, '"block"'),
            ("let through", held, "systemMessage"),
            ("no planning folder", bare, ""),
        ]
        for i in range(runs):
            for case, project, expected in cases:
                stop = {"session_id": f"bench-{i}", "cwd": str(project), "hook_event_name": "Stop"}
                ms, out = _run([script, "hook", "Stop"], stop, {**env, "CLAUDE_PROJECT_DIR": str(project)})
                assert expected in out, (case, out)
                results[case].append(ms)
            ms, _ = _run([sys.executable, "-c", "pass"], {}, env)
            results["python -c pass"].append(ms)
    return {case: _figures(times) for case, times in results.items() if times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--tasks", type=int, default=50)
    args = parser.parse_args()
    print(json.dumps(measure(args.runs, args.tasks), indent=2))


if __name__ == "__main__":
    main()
