"""The team benchmark's harness at a tiny scale (K = 2, 20 tasks, the file store, both
ways, a kill): its correctness counters come out right, so the harness cannot rot. Real
server processes, real MCP sessions, a real `kill -9`."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.team import TeamConfig, main, run_all
from bench.team_agents import Claim, Done, Log, kill_leftovers
from bench.team_check import TeamResult, early_starts, worked_twice
from bench.team_plan import make_plan
from bench.team_report import HEADING, replace_section, team_section
from tests.support.waits import bound

# Seconds of work, a kill about every 2 s (the first before the work can be done: a working agent
# is waited for) and 2 s leases are what the run is; the deadlines are bounds.
TINY = TeamConfig(
    ks=(2,),
    tasks=20,
    work_seconds=4.0,
    kill_every=2.0,
    stores=("file",),
    lease_floor=2,
    deadline=bound(60),
    run_seconds=bound(30),
)


def _check(r: TeamResult) -> None:
    assert r.finished, f"{r.way}: the plan was not done in time"
    assert r.completed_in_store == r.tasks == 20
    assert r.early_starts == 0
    assert r.twice.under_lease == r.twice.completed_twice == 0, r.twice
    # A stale ready list may reopen a task just completed (the old way's hazard); the new way never does.
    assert r.twice.reopened == 0 or r.way == "old", r.twice
    assert r.kills >= 1 and r.kills_holding >= 1, "the run killed no working agent: it tested no take-over"
    assert r.taken_over == r.kills_holding and r.not_taken_over == 0
    assert r.violations == r.twice.reopened and r.unfinished == 0
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


def test_the_judge_counts_each_kind_of_violation_it_is_shown() -> None:
    """The counters are not vacuous: a log with a task started before its blocker was done,
    a completed task claimed again by a stale list, and a claim under another owner's
    running lease, is judged to hold exactly those."""
    plan = make_plan(20, 7)
    blocked = next(i for i, b in plan.blocked_by.items() if b)
    blocker = plan.blocked_by[blocked][0]
    log = Log(
        claims=[
            Claim("a", blocker, 0.0, 0.1, 10.0),
            Claim("b", blocked, 0.2, 0.3, 10.0),  # before `blocker` was completed (at 1.0)
            Claim("c", blocker, 2.0, 2.1, 12.0),  # `blocker` was completed at 1.1: a stale list reopens it
            Claim("d", 5, 3.0, 3.1, 13.0),
            Claim("e", 5, 4.0, 4.1, 14.0),  # d's 5 s lease still ran
        ],
        dones=[Done("a", blocker, 0.1, 1.0, 1.1), Done("b", blocked, 0.3, 1.2, 1.3)],
    )
    assert early_starts(plan, log) == 1
    twice = worked_twice(log.claims, log.dones, killed=set(), lease=5)
    assert (twice.reopened, twice.under_lease, twice.completed_twice) == (1, 1, 0)
    assert twice.violations == 2


def test_a_renewed_lease_runs_from_its_last_renewal() -> None:
    """A heartbeat the server acknowledged moves the lease on: a claim by another owner
    after the claim's lease but within the renewed one is judged a violation, and one after
    the renewed lease a take-over."""
    renewed = Claim("d", 5, 3.0, 3.1, 9.0, renewed=7.0)  # a 5 s lease, renewed at 7: it runs to 12 at least
    within = worked_twice([renewed, Claim("e", 5, 10.0, 10.1, 16.0)], [], killed=set(), lease=5)
    assert (within.under_lease, within.live_takeovers) == (1, 0)
    after = worked_twice([renewed, Claim("e", 5, 12.5, 12.6, 18.0)], [], killed=set(), lease=5)
    assert (after.under_lease, after.live_takeovers) == (0, 1)
    unrenewed = Claim("d", 5, 3.0, 3.1, 9.0)
    taken = worked_twice([unrenewed, Claim("e", 5, 10.0, 10.1, 16.0)], [], killed=set(), lease=5)
    assert (taken.under_lease, taken.live_takeovers) == (0, 1)


def test_the_lease_floor_given_is_the_one_the_report_states(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--lease-floor` sets the shortest lease the agents take, and the section says that floor."""
    saved = tmp_path / "runs.jsonl"
    saved.write_text("")
    assert main(["--render", str(saved), "--lease-floor", "3", "--no-write"]) == 0
    out = capsys.readouterr().out
    assert "at least 3 s" in out and "renews its lease every 1 s" in out
    assert main(["--render", str(saved), "--heartbeat", "0", "--no-write"]) == 0
    assert "renews its lease" not in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--render", str(saved), "--lease-floor", "0", "--no-write"])
