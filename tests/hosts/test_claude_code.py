"""The repository as a Claude Code plugin marketplace, checked by Claude Code's own CLI
(no model needed): the plugin validates with nothing to report, installs from the local
marketplace in one command, and `claude mcp list` in a sample project shows its server
connected, whether `planning-mcp` is on PATH or only uv is there (the launcher then makes
an environment of this checkout once). The README's `.mcp.json` is pending until approved, then
connected. A health check (connect, list, disconnect) leaves no `.planning/` behind."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from planning_core import Planner
from planning_core.stores.files import FileStore
from tests.claude_code.plugin import RELEASES, release_bin
from tests.support.claude_model import documented_settings
from tests.support.procs import REPO, as_cloned, console_script

from .tools import claude, host_env, node_bin, python_tool, readme_block, readme_commands, run, tool_dir

PLUGIN = "planning-mcp"
GITHUB_REPO = "planning-mcp/planning-mcp"  # the README's marketplace: the project on GitHub
HOOK_EVENTS = {
    "SessionStart": "startup|resume|clear|compact",
    "UserPromptSubmit": None,
    "PostToolUse": "",
    "PostToolUseFailure": "",
    "Stop": None,
}


def test_the_plugin_and_marketplace_validate_strictly_with_nothing_to_report(tmp_path: Path) -> None:
    env = host_env(tmp_path / "home", [node_bin()])
    r = run([claude(), "plugin", "validate", "--strict", REPO], env, cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "✔ Validation passed" in out
    assert "These checks found nothing to report" in out, out  # the plugin directory's checks too
    for bad in ("⚠", "✘", "rror"):
        assert bad not in out, out


def test_the_hooks_run_the_planning_mcp_hook_command_for_each_event() -> None:
    """The form `planning-mcp hook <Event>` (server/claude_code/claude_hook.py), through the plugin's
    launcher; SessionStart on every source, including the one after a compaction."""
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert set(hooks) == set(HOOK_EVENTS) == set(documented_settings()["hooks"])  # the plugin = the documented set-up
    for event, matcher in HOOK_EVENTS.items():
        (entry,) = hooks[event]
        assert entry.get("matcher") == matcher
        (hook,) = entry["hooks"]
        assert hook["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/bin/planning-mcp" hook {event}'


def test_the_launcher_runs_the_session_start_hook_as_claude_code_would(tmp_path: Path) -> None:
    """The hooks.json command line, run by a shell with CLAUDE_PLUGIN_ROOT as Claude Code
    sets it, prints the active plans for the project."""
    project = tmp_path / "project"
    root = project / ".planning"
    store = FileStore(root)
    store.ensure_writable()
    Planner(store).create_plan(
        "Ship the plugin", analysis="a", approach="b", steps=[], tasks=[{"subject": "Write hooks.json"}]
    )
    command = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]["SessionStart"][0]
    env = host_env(tmp_path / "home", [Path(console_script()).parent], {"CLAUDE_PLUGIN_ROOT": str(REPO)})
    env["CLAUDE_PROJECT_DIR"] = str(project)
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "SessionStart", "source": "compact"}
    r = subprocess.run(
        ["sh", "-c", command["hooks"][0]["command"]],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=project,
    )
    assert r.returncode == 0, r.stderr
    context = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("# Active Plans") and "ship-the-plugin [0/1 done]" in context


def _server_line(listing: str, name: str) -> str:
    lines = [line for line in listing.splitlines() if line.startswith(f"{name}:")]
    assert len(lines) == 1, listing
    return lines[0]


def _sample_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    return project


def install_as_the_readme_says(binary: Path | str, env: dict[str, str], project: Path) -> None:
    """The README's plugin commands, with this checkout (as a clone has it) for the GitHub repository."""
    for line in readme_commands("claude-code-plugin"):
        args = shlex.split(line.replace(GITHUB_REPO, str(as_cloned())))
        assert args[0] == "claude", line
        done = run([binary, *args[1:]], env, cwd=project)
        assert done.returncode == 0, f"{line}: {done.stdout}{done.stderr}"


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("found_by", ["path", "uv"])
def test_the_plugin_installed_as_the_readme_says_connects(tmp_path: Path, found_by: str, release: str) -> None:
    """`path`: planning-mcp on PATH (pipx install); `uv`: only uv, and the launcher makes
    its environment of this checkout once (as after adding the marketplace from GitHub).
    On both tested releases: the README's commands are the ones both accept."""
    binary = release_bin(release)
    project = _sample_project(tmp_path)
    finder = Path(console_script()).parent if found_by == "path" else tool_dir(tmp_path, python_tool("uv"))
    env = host_env(tmp_path / "home", [node_bin(), finder])
    if found_by == "uv":  # the first run makes the environment (fetching dependencies), not in a health check
        warm = run([REPO / "bin" / "planning-mcp", "--version"], env, cwd=project)
        assert warm.returncode == 0, warm.stderr
        again = run([REPO / "bin" / "planning-mcp", "--version"], {**env, "UV_OFFLINE": "1"}, cwd=project)
        assert again.returncode == 0 and "first start" not in again.stderr, again.stderr  # no index asked
    install_as_the_readme_says(binary, env, project)
    listing = run([binary, "mcp", "list"], env, cwd=project)
    assert listing.returncode == 0, listing.stdout + listing.stderr
    assert "✔ Connected" in _server_line(listing.stdout, f"plugin:{PLUGIN}:{PLUGIN}")
    assert sorted(p.name for p in project.iterdir()) == [".git"]  # no .planning from a health check


def test_the_readmes_mcp_json_is_pending_until_approved_then_connects(tmp_path: Path) -> None:
    project = _sample_project(tmp_path)
    env = host_env(tmp_path / "home", [node_bin(), Path(console_script()).parent])
    (project / ".mcp.json").write_text(json.dumps(readme_block("claude-code-mcp-json")), encoding="utf-8")
    (name,) = readme_block("claude-code-mcp-json")["mcpServers"]
    pending = run([claude(), "mcp", "list"], env, cwd=project)
    assert "⏸ Pending approval" in _server_line(pending.stdout, name), pending.stdout + pending.stderr
    # The README's approval, in the user's settings (~/.claude/settings.json is in
    # CLAUDE_CONFIG_DIR); the project's settings.local.json is gated until the folder is trusted.
    approval = readme_block("claude-code-approval")
    (Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json").write_text(json.dumps(approval), encoding="utf-8")
    listing = run([claude(), "mcp", "list"], env, cwd=project)
    assert "✔ Connected" in _server_line(listing.stdout, name), listing.stdout + listing.stderr
    assert not (project / ".planning").exists()  # the health check connected and left nothing


def test_the_commands_are_the_servers_prompts() -> None:
    """commands/*.md are made from server/mcp/prompts.py (one text, two ways to reach it)."""
    r = subprocess.run(
        [str(Path(console_script()).parent / "python"), str(REPO / "packaging" / "build.py"), "commands", "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stdout + r.stderr


NEITHER = "no planning-mcp on PATH and no uv to install it"


def test_the_launcher_with_neither_planning_mcp_nor_uv_says_what_to_install(tmp_path: Path) -> None:
    env = host_env(tmp_path / "home", [])  # /usr/bin:/bin only
    r = run([REPO / "bin" / "planning-mcp", "--version"], env, cwd=tmp_path, timeout=60)
    assert r.returncode == 127
    assert r.stdout == ""
    assert NEITHER in r.stderr and "pipx install" in r.stderr


@pytest.mark.parametrize("release", RELEASES)
def test_a_plugin_that_cannot_start_says_why_in_claudes_debug_log(tmp_path: Path, release: str) -> None:
    """The README's `claude --debug-file F mcp list`: the failed server's reason is in F."""
    binary = release_bin(release)
    project = _sample_project(tmp_path)
    env = host_env(tmp_path / "home", [])  # neither planning-mcp nor uv
    install_as_the_readme_says(binary, env, project)
    log = tmp_path / "debug.log"
    listing = run([binary, "--debug-file", log, "mcp", "list"], env, cwd=project)
    assert "✘ Failed to connect" in _server_line(listing.stdout, f"plugin:{PLUGIN}:{PLUGIN}"), listing.stdout
    assert NEITHER in log.read_text(encoding="utf-8")
