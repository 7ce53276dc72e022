"""What Claude Code's Stop hook costs per stop: `planning-mcp hook Stop` run as the plugin
runs it (bench/hook_timing.py), on a file store.

    python -m bench.stop_hook [--runs 30] [--tasks 50]

Three cases, each `runs` times, on a plan of `tasks` tasks in a chain: a stop with the
first task ready (blocked, the session's state written), a stop while another agent holds it
(let through, saying so), and a project with no planning folder (the hook does nothing).
Beside them `python -c pass` with the same interpreter in the same run: the floor any Python
hook pays. Figures: median and p95 wall time in milliseconds, and each case's median over
the bare start.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench import hook_timing
from bench.hook_timing import BARE, Figures

SECTION = hook_timing.Section(
    "bench.stop_hook",
    "Claude Code's Stop hook: what one stop costs",
    "planning-mcp hook Stop",
    "What the hook itself decides is the difference to a project with no planning folder; the goal:",
    "stop",
)


def measure(runs: int, tasks: int) -> Figures:
    env = {**hook_timing.hook_env(), "PLANNING_MCP_STOP_BLOCKS": "3"}
    results: dict[str, list[float]] = {"blocked": [], "let through": [], "no planning folder": [], BARE: []}
    with tempfile.TemporaryDirectory() as tmp:
        ready, held, bare = Path(tmp) / "ready", Path(tmp) / "held", Path(tmp) / "bare"
        bare.mkdir()
        hook_timing.chain_plan(ready, tasks)
        hook_timing.chain_plan(held, tasks, status="in_progress", owner="another-agent")
        cases = [
            ("blocked", ready, '"block"'),
            ("let through", held, "systemMessage"),
            ("no planning folder", bare, ""),
        ]
        for i in range(runs):
            for case, project, expected in cases:
                stop = {"session_id": f"bench-{i}", "cwd": str(project), "hook_event_name": "Stop"}
                ms, out = hook_timing.run_hook("Stop", stop, {**env, "CLAUDE_PROJECT_DIR": str(project)}, project)
                assert expected in out, (case, out)
                results[case].append(ms)
            results[BARE].append(hook_timing.run_bare(env, bare))
    return hook_timing.figures(results)


if __name__ == "__main__":
    hook_timing.main(__doc__ or "", measure, SECTION, runs=30)
