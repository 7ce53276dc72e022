"""Print the conformance table (RELIABILITY.md summarises it): every scenario of every pinned suite, run against
a fresh `planning-mcp serve --transport http`, with its result and, for each that cannot apply,
why. Usage: `.venv/bin/python -m tests.conformance.table [OUT_DIR]` (after install.sh)."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from tests.support.procs import serving

from ._suite import Check, listed_scenarios, missing, pinned_suites, run_suite
from .expectations import SCENARIOS, problems, verdict


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(tempfile.mkdtemp(prefix="conformance-"))
    suites = pinned_suites()
    for suite in suites:
        if gaps := missing(suite):
            print("; ".join(gaps), file=sys.stderr)
            return 1
    results: dict[str, dict[str, list[Check]]] = {}
    order: list[str] = []
    for suite in suites:
        work = out / suite.version
        work.mkdir(parents=True, exist_ok=True)
        start = time.monotonic()
        with serving(work, "http") as served:
            run = run_suite(suite, f"{served.base}/mcp", work / "results")
        print(f"{suite.version}: {time.monotonic() - start:.1f} s, exit {run.returncode}", file=sys.stderr)
        results[suite.version] = run.results
        order += [s for s in listed_scenarios(suite) if s not in order]

    versions = [s.version for s in suites]
    print("| Scenario | " + " | ".join(versions) + " | Applies | What it checks / why it cannot apply |")
    print("|---|" + "---|" * len(versions) + "---|---|")
    failing: list[str] = []
    exempt: list[str] = []
    for name in order:
        expect = SCENARIOS.get(name)
        cells = []
        for v in versions:
            checks = results[v].get(name)
            found = problems(name, checks or [], v)
            cell = "—" if checks is None else verdict(checks)
            if expect is not None and expect.applies and checks and not found and cell.startswith(("fail", "warn")):
                cell += " (exempt, below)"
            cells.append(cell)
            failing += found
        applies = "?" if expect is None else ("yes" if expect.applies else "n/a")
        why = "" if expect is None else expect.why
        if expect is not None and expect.exempt:
            why += " (the checks below are not ours)"
            exempt += [f"- `{name}` / `{k}`: {v}" for k, v in expect.exempt.items()]
        print(f"| `{name}` | " + " | ".join(cells) + f" | {applies} | {why} |")
    if exempt:
        print("\nChecks inside applicable scenarios that are not ours (`@version`: that version only):\n")
        print("\n".join(exempt))
    if failing:
        print("\nFailing for something we offer:\n" + "\n".join(sorted(set(failing))), file=sys.stderr)
    return 1 if failing else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
