"""What Claude Code waits for at each prompt and tool call: `planning-mcp hook
UserPromptSubmit` and `hook PostToolUse` run as the plugin runs them (bench/hook_timing.py),
and once a session `hook SessionStart` (a new session: the Active Plans block and what
happened in the last day), beside `python -c pass` with the same interpreter in the same run:
the floor any Python hook pays.

    python -m bench.prompt_hook [--runs 40] [--tasks 50]

On a file store with one plan of `tasks` tasks, one in progress. Figures: median and p95
wall time in milliseconds, and each hook's median over the bare start.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench import hook_timing
from bench.hook_timing import BARE, Figures

SECTION = hook_timing.Section(
    "bench.prompt_hook",
    "Claude Code's prompt, tool-call and session-start hooks: what each call waits",
    "planning-mcp hook <event>",
    "The goal:",
    "hook",
)


def measure(runs: int, tasks: int) -> Figures:
    env = hook_timing.hook_env()
    results: dict[str, list[float]] = {"UserPromptSubmit": [], "PostToolUse": [], "SessionStart": [], BARE: []}
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "shop"
        hook_timing.chain_plan(project, tasks, status="in_progress")
        env["CLAUDE_PROJECT_DIR"] = str(project)
        for i in range(runs):
            session = {"session_id": f"bench-{i % 4}", "cwd": str(project)}
            prompt = {**session, "hook_event_name": "UserPromptSubmit", "prompt": "go on"}
            tool = {**session, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
            start = {"session_id": f"bench-start-{i}", "cwd": str(project), "hook_event_name": "SessionStart"}
            for event, payload in (("UserPromptSubmit", prompt), ("PostToolUse", tool), ("SessionStart", start)):
                results[event].append(hook_timing.run_hook(event, payload, env, project)[0])
            results[BARE].append(hook_timing.run_bare(env, project))
    return hook_timing.figures(results)


if __name__ == "__main__":
    hook_timing.main(__doc__ or "", measure, SECTION, runs=40)
