"""The team benchmark's harness at a tiny scale (K = 2, 20 tasks, the file store, both
ways, a kill): its correctness counters come out right, so the harness cannot rot. Real
server processes, real MCP sessions, a real `kill -9`."""

from __future__ import annotations

from pathlib import Path

from bench.team import TeamConfig, run_all
from bench.team_agents import kill_leftovers
from bench.team_check import TeamResult
from bench.team_plan import make_plan
from bench.team_report import HEADING, replace_section, team_section

TINY = TeamConfig(ks=(2,), tasks=20, work_seconds=3.0, kill_every=3.0, stores=("file",), lease_floor=2, deadline=90)


def _check(r: TeamResult) -> None:
    assert r.finished, f"{r.way}: the plan was not done in time"
    assert r.completed_in_store == r.tasks == 20
    assert r.early_starts == 0
    assert r.twice.violations == 0, r.twice
    assert r.kills >= 1 and r.kills_holding >= 1, "the run killed no working agent: it tested no take-over"
    assert r.taken_over == r.kills_holding and r.not_taken_over == 0
    assert r.violations == 0 and r.unfinished == 0
    # Every task cost at least a claim and a completion, each read and written.
    assert r.calls >= 2 * r.tasks and r.chars_read > 0 and r.chars_written > 0
    assert r.bound > 0 and r.makespan >= r.bound * 0.99


async def test_a_tiny_team_finishes_the_plan_with_no_violation_on_both_ways(tmp_path: Path) -> None:
    results, notes = await run_all(TINY, tmp_path)
    assert not [n for n in notes if "NOT MEASURED" in n or "not run" in n], notes
    assert sorted(r.way for r in results) == ["new", "old"]
    for r in results:
        _check(r)
    new = next(r for r in results if r.way == "new")
    old = next(r for r in results if r.way == "old")
    # The new way claims in one call: fewer characters a completed task than listing first.
    assert new.per_task(new.chars_read + new.chars_written) < old.per_task(old.chars_read + old.chars_written)
    # The section is generated from these results and replaces its old self in a file.
    section = "\n".join(team_section(results, notes, TINY, make_plan(TINY.tasks, TINY.seed)))
    assert section.startswith(HEADING) and "| file  | new | 2 |" in section
    page = replace_section("# B\n\n## X\n\nx\n\n## History\n\nh\n", section)
    assert page.index("## X") < page.index(HEADING) < page.index("## History")
    assert replace_section(page, section) == page
    assert kill_leftovers("team_") == 0, "a server of the run outlived it"
