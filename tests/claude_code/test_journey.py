"""What a new user does, in one fresh git project with the plugin installed from this
checkout, on both pinned releases of Claude Code's CLI: the first prompt in plan mode, the
plan approved in Claude Code's own dialog, the Session Plan made of it; the first task
claimed, worked and completed through the plugin's tools; `/clear`, and the Active Plans
line back; a second agent in a git worktree claims the next task (the plans are shared:
the main working tree's `.planning`); after `planning-mcp git-setup`, the branches merge
with plain git in a shell without planning-mcp on PATH.

Two things a script playing the model must do as a model would, or a step never answers:
the plugin's tools are `mcp__plugin_planning-mcp_planning-mcp__*`, so the user's approval
must name those (here in the user's settings, which hold in every folder, the worktree
included), else the first call waits on Claude Code's permission dialog; and a tool not
offered yet is reached first (`reach`: WaitForMcpServers while the plugin's server is still
connecting, as it can be right after the plan's approval; ToolSearch where 2.1.332 defers
MCP tools), else the call is refused as "No such tool available"."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from planning_core.stores.files import FileStore
from tests.hosts.tools import node_bin
from tests.support.claude_model import (
    MAX_WAITS,
    Block,
    ClaudeHome,
    block_text,
    interactive,
    last_user_prompt,
    reach,
    request_text,
    results_since_prompt,
    run_print,
    say,
    scripted_model,
    text,
    tool_names,
    tool_use,
)
from tests.support.procs import console_script, wait_until
from tests.support.waits import bound

from .plugin import PLUGIN, RELEASES, approve_plan, fresh_project, install_plugin, release_bin
from .test_plan_mode import PLAN, PLAN_FILE

TOOLS = f"mcp__plugin_{PLUGIN}_{PLUGIN}"  # the plugin's server's tools, as Claude Code names them
UPDATE = f"{TOOLS}__TaskUpdate"
PLAIN_PATH = os.pathsep.join(("/usr/local/bin", "/usr/bin", "/bin"))  # a shell without planning-mcp
FIRST_PROMPT = "Plan rate limiting for the API"
AFTER_CLEAR = "What is left of the plan?"
SECOND_PROMPT = "Take the next task of the plan"
CLAIMED = re.compile(r"Claimed: #(\d+) ")
IDLE = "? for shortcuts"  # the foot of the prompt while the UI waits for input, on both releases
LET_THROUGH = "the stop was blocked 3 times in a row"  # the Stop hook's note when it lets a stop go

Call = tuple[str, dict[str, Any]]
Step = Callable[[dict[str, Any]], Call]


def call(name: str, arguments: dict[str, Any]) -> Step:
    return lambda body: (name, arguments)


def write_plan_file(body: dict[str, Any]) -> Call:
    """In plan mode the system prompt names the file the plan goes in."""
    named = PLAN_FILE.search(request_text(body))
    assert named, "plan mode named no plan file"
    return "Write", {"file_path": named.group(1), "content": PLAN}


def complete_claimed(body: dict[str, Any]) -> Call:
    """Complete the task the turn's claim took (its answer names it)."""
    claims = [CLAIMED.search(block_text(r)) for r in results_since_prompt(body)]
    (taken,) = [int(c.group(1)) for c in claims if c]
    return UPDATE, {"taskId": taken, "status": "completed"}


class Agent:
    """A scripted model: for each prompt (matched whole) the tool calls it makes in order,
    one per request, each reached first if not offered yet (`reach`), then a closing text;
    told by the Stop hook to go on, it ends its turn with text again."""

    def __init__(self, turns: dict[str, list[Step]]) -> None:
        self.turns = turns

    def __call__(self, body: dict[str, Any]) -> list[Block]:
        prompt = last_user_prompt(body)
        if prompt not in self.turns:
            return [text("Nothing scripted for that.")]
        turn, steps = list(self.turns).index(prompt), self.turns[prompt]
        results = [str(r.get("tool_use_id", "")) for r in results_since_prompt(body)]
        done = sum(r.startswith(f"toolu_{turn}_") for r in results)
        if done >= len(steps):
            return [text(f"Finished: {prompt}")]
        name, arguments = steps[done](body)
        if name not in tool_names(body):
            mark = f"toolu_reach{turn}{done}_"
            tries = sum(r.startswith(mark) for r in results)
            first = reach(name, tool_names(body), f"{mark}{tries}") if tries < MAX_WAITS else None
            return [first] if first else [text(f"{name} was never offered.")]  # the test fails on it
        return [tool_use(name, arguments, f"toolu_{turn}_{done}")]


def approve_tools(home: ClaudeHome) -> None:
    """The user's approval of the plugin's tools and of file writes, in the user's settings
    (Claude Code's config dir; `claude plugin install` put the plugin's enabling there)."""
    settings_file = home.config / "settings.json"
    settings = json.loads(settings_file.read_text(encoding="utf-8"))
    settings["permissions"] = {"allow": [TOOLS, "Write"]}
    settings_file.write_text(json.dumps(settings, indent=2), encoding="utf-8")


def shell(folder: Path, *args: str, path: str | None = None) -> str:
    """A command the user types in `folder`: the user's environment (no planning-mcp
    settings of the test suite's), with the test's PATH or `path`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANNING_MCP_")}
    env.update(PATH=path or os.environ["PATH"], GIT_AUTHOR_NAME="U", GIT_AUTHOR_EMAIL="u@example.com")
    env.update(GIT_COMMITTER_NAME="U", GIT_COMMITTER_EMAIL="u@example.com")
    done = subprocess.run(list(args), cwd=folder, env=env, capture_output=True, text=True, timeout=bound(20))
    assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"
    return done.stdout


def clear(ui: Any) -> None:
    """/clear, typed and sent; done once the conversation is off the screen and the prompt
    waits again (both releases' footers say "? for shortcuts" then, and only then)."""
    ui.keys("-l", "/clear")
    ui.wait_for("/clear")
    ui.keys("Enter")
    wait_until(lambda: FIRST_PROMPT not in (s := ui.screen()) and IDLE in s, "the conversation cleared", bound(20))


def request_after(requests: list[dict[str, Any]], prompt: str) -> dict[str, Any]:
    return next(r for r in requests if prompt in last_user_prompt(r))


@pytest.mark.parametrize("release", RELEASES)
def test_a_new_users_journey(tmp_path: Path, release: str, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = release_bin(release)
    if release == "newest":  # it needs Node 22 on PATH
        monkeypatch.setenv("PATH", os.pathsep.join([str(node_bin()), os.environ["PATH"]]))
    project = fresh_project(tmp_path / "shop")
    shell(project, "git", "commit", "-q", "--allow-empty", "-m", "A new project")
    worktree = tmp_path / "shop-login"
    home = ClaudeHome(tmp_path / "claude", project)
    home.prepare()
    agent = Agent(
        {
            FIRST_PROMPT: [
                write_plan_file,
                call("ExitPlanMode", {"plan": PLAN}),
                call(UPDATE, {"taskId": "next", "status": "in_progress", "owner": "alice"}),
                call("Write", {"file_path": str(project / "limiter.py"), "content": "LIMIT = 10\n"}),
                complete_claimed,
            ],
            SECOND_PROMPT: [
                call(UPDATE, {"taskId": "next", "status": "in_progress", "owner": "bob"}),
                call("Write", {"file_path": str(worktree / "login.py"), "content": "import limiter\n"}),
                complete_claimed,
            ],
        }
    )
    store = FileStore(project / ".planning")
    with scripted_model(agent) as model:
        install_plugin(binary, home, model)
        approve_tools(home)
        with interactive(binary, home, model, tmp_path, ("--permission-mode", "plan")) as ui:
            # The first prompt, in plan mode; the plan approved in Claude Code's dialog.
            ui.keys("-l", FIRST_PROMPT)
            ui.wait_for(FIRST_PROMPT)
            ui.keys("Enter")
            approve_plan(ui)
            # The model works through the plan's first task; then, the plan not done, the Stop
            # hook keeps it going three times and lets it stop, saying so on the screen.
            ui.wait_for(LET_THROUGH, timeout=bound(40))
            (name,) = store.active_plans()
            assert store.read_plan_md(name) == PLAN
            tasks = store.snapshot(name).tasks
            assert [(t.subject, t.status.value, t.owner) for t in tasks.values()] == [
                ("Add a limiter module", "completed", "alice"),
                ("Wire it into login", "pending", ""),
                ("Write tests", "pending", ""),
            ]
            assert (project / "limiter.py").read_text() == "LIMIT = 10\n"
            told = request_text(model.requests[-1])
            assert f"Created plan {name} from the approved plan; it is now the current plan." in told
            # /clear: the conversation is gone, the plan comes back.
            clear(ui)
            say(ui, AFTER_CLEAR, then=LET_THROUGH, timeout=bound(40))
        after_clear = request_text(request_after(model.requests, AFTER_CLEAR))
        assert f"# Active Plans\n- {name} [1/3 done]" in after_clear
        assert FIRST_PROMPT not in after_clear

        # The user commits the first task and the plan, sets git up for plans (planning-mcp
        # on PATH, as installed), and starts a second agent in a worktree of a new branch.
        shell(project, console_script(), "git-setup")
        shell(project, "git", "add", "-A")
        shell(project, "git", "commit", "-q", "-m", "Rate limiter")
        shell(project, "git", "worktree", "add", "-q", "-b", "login", str(worktree))
        second = ClaudeHome(home.base, worktree)
        done = run_print(binary, second, model, SECOND_PROMPT, timeout=bound(60))
        assert done.returncode == 0, done.stdout + done.stderr
    assert model.errors == []
    # The second agent was told of the shared plan before its first step, and claimed the next task.
    assert f"# Active Plans\n- {name} [1/3 done]" in request_text(request_after(model.requests, SECOND_PROMPT))
    tasks = store.snapshot(name).tasks
    assert [(t.status.value, t.owner) for t in tasks.values()] == [
        ("completed", "alice"),
        ("completed", "bob"),
        ("pending", ""),
    ]
    assert shell(worktree, "git", "status", "--porcelain") == "?? login.py\n"  # the plan stayed in one place

    # Each branch committed; the branches merge with plain git, planning-mcp not on PATH:
    # a true merge into main, then a fast-forward of the worktree's branch.
    assert shutil.which("planning-mcp", path=PLAIN_PATH) is None
    shell(worktree, "git", "add", "login.py")
    shell(worktree, "git", "commit", "-q", "-m", "Login limited")
    shell(project, "git", "commit", "-qam", "Login claimed and done")
    shell(project, "git", "merge", "-q", "--no-edit", "login", path=PLAIN_PATH)
    assert len(shell(project, "git", "rev-list", "--parents", "-1", "HEAD").split()) == 3  # a merge commit
    shell(worktree, "git", "merge", "-q", "--ff-only", "main", path=PLAIN_PATH)
    for tree in (project, worktree):
        assert (tree / "limiter.py").is_file() and (tree / "login.py").is_file()
        assert shell(tree, "git", "status", "--porcelain") == ""
    assert [t.status.value for t in store.snapshot(name).tasks.values()] == ["completed", "completed", "pending"]
