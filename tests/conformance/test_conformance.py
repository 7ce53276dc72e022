"""The official MCP conformance suite against a real `planning-mcp serve --transport http`.

Every pinned version of the suite runs all its server scenarios against a fresh server on a
free port of 127.0.0.1; expectations.py says which scenarios are about what we offer (they
must pass) and why the others cannot apply. Node 22 and the suite come from
tests/conformance/install.sh, which the test runs itself when they are missing (so the README's
one test command works on a fresh machine; .ci/run calls it too). When they cannot be installed
the test fails, so CI can never pass without running the suite; PLANNING_MCP_SKIP_CONFORMANCE=1
turns that into a skip for a machine without the npm registry."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.procs import serving

from ._suite import INSTALL, SKIP_ENV, Run, Suite, install, listed_scenarios, missing, pinned_suites, run_suite
from .expectations import SCENARIOS, problems

SUITES = pinned_suites()


def require(suite: Suite) -> None:
    gaps = missing(suite)
    if not gaps:
        return
    installed = ""
    if os.environ.get(SKIP_ENV) != "1":
        try:
            installed = install()
        except (OSError, subprocess.SubprocessError) as e:
            out = f"{getattr(e, 'stdout', '') or ''}{getattr(e, 'stderr', '') or ''}"
            installed = f"{INSTALL} failed: {e}\n{out[-2000:]}"
        gaps = missing(suite)
        if not gaps:
            return
    why = "; ".join(gaps) + f". Run {INSTALL} (needs npm and the npm registry)"
    if installed:
        why += f"\n{installed}"
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{why}; skipped because {SKIP_ENV}=1")
    pytest.fail(f"{why}, or set {SKIP_ENV}=1 to skip the conformance suite", pytrace=False)


def run_against_server(suite: Suite, tmp_path: Path) -> tuple[Run, str]:
    """The suite's run, and what the server wrote on stderr meanwhile."""
    with serving(tmp_path, "http") as served:
        run = run_suite(suite, f"{served.base}/mcp", tmp_path / "results")
        stderr = served.stderr()
        assert served.proc.poll() is None, f"the server died during the suite:\n{stderr}"
    return run, stderr


@pytest.mark.parametrize("suite", SUITES, ids=[s.version for s in SUITES])
def test_conformance_suite(suite: Suite, tmp_path: Path) -> None:
    require(suite)
    listed = listed_scenarios(suite)
    run, stderr = run_against_server(suite, tmp_path)

    # 0: all passed, 1: some check failed; anything else is the suite itself breaking.
    assert run.returncode in (0, 1), f"the suite crashed (exit {run.returncode}):\n{run.output[-4000:]}"
    no_result = sorted(set(listed) - set(run.results))
    assert not no_result, f"scenarios that produced no checks.json: {no_result}\n{run.output[-4000:]}"

    found = [line for scenario in listed for line in problems(scenario, run.results[scenario], suite.version)]
    assert not found, "conformance checks that fail for something we offer:\n" + "\n".join(found)
    # Every request the suite sends gets an answer that says why; none may crash a handler.
    assert "Traceback" not in stderr, f"the server logged an exception during the suite:\n{stderr[-4000:]}"


def test_every_classified_scenario_exists() -> None:
    """An entry for a scenario no pinned suite has is stale: the table would describe nothing."""
    for suite in SUITES:
        require(suite)
    known = {name for suite in SUITES for name in listed_scenarios(suite)}
    assert sorted(set(SCENARIOS) - known) == []
