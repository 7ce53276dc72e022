"""Promise: N agents racing to claim one task through N real servers on one store: exactly
one wins, every time (the peers' users measured 2 to 7 winners out of 8).
With a 1 s lease the claim runs out, the task comes back as ready, and exactly one of
the others takes it over, the hand-over kept in the task's metadata. And 32 agents
claiming "the next task" through the same servers at once get 32 different tasks.

Each agent is a real `python -m server --store URL` over stdio, spoken to in raw
JSON-RPC lines; a round sends the same claim to every server back to back, before
reading any answer, so that all of them contend for the plan at once. The store is the
file store (a folder) or PostgreSQL (a fresh database on the tests' cluster)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from planning_core.rendering.render import CLAIMABLE_MARK
from tests.support.agent_stdio import Agent
from tests.support.procs import stop
from tests.support.waits import bound

AGENTS = 8
ROUNDS = 20
CONFLICT = "is already in progress under owner"


@pytest.fixture(scope="module", params=["files", "postgres"])
def agents(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Agent]]:
    """Eight servers on one store, shared by this module's tests (each makes its own plan):
    starting eight servers is most of the time these tests take."""
    here = tmp_path_factory.mktemp(f"race-{request.param}")
    if request.param == "files":
        url = str(here / "root")
    else:
        from tests.support.pg import fresh_database_url

        url = fresh_database_url()
    started = [Agent(f"agent{i}", url, here, here / f"agent{i}.log") for i in range(AGENTS)]
    try:
        # The handshake: a server that answered initialize is reading requests, so a
        # round's claims reach servers that are all ready for them.
        for a in started:
            a.initialize()
        yield started
    finally:
        for a in started:
            stop(a.proc)


def race(agents: list[Agent], task_id: int, plan: str, lease: int | None = None) -> list[tuple[str, bool, str]]:
    """Every agent claims the task at once: all requests are written before any answer
    is read. (agent, won, text) for each."""
    args: dict[str, Any] = {"taskId": task_id, "status": "in_progress", "plan": plan}
    if lease is not None:
        args["leaseSeconds"] = lease
    sent = [(a, a.start_call("TaskUpdate", {**args, "owner": a.name})) for a in agents]
    results = []
    for a, rid in sent:
        ok, text, _ = a.result(rid)
        results.append((a.name, ok, text))
    return results


def one_winner(results: list[tuple[str, bool, str]]) -> str:
    winners = [name for name, ok, _ in results if ok]
    assert len(winners) == 1, f"{len(winners)} winners: {results}"
    for name, ok, text in results:
        if not ok:
            assert CONFLICT in text and repr(winners[0]) in text, (name, text)
    return winners[0]


def make_plan(agent: Agent) -> str:
    ok, text, data = agent.call(
        "PlanCreate", {"title": "Race", "analysis": "a", "approach": "b", "name": "race", "date": "2026-05-28"}
    )
    assert ok, text
    return str(data["plan"]["name"])


def new_task(agent: Agent, plan: str, subject: str) -> int:
    ok, text, data = agent.call("TaskCreate", {"subject": subject, "description": "d", "plan": plan})
    assert ok, text
    return int(data["task"]["id"])


def task(agent: Agent, plan: str, task_id: int) -> dict[str, Any]:
    ok, text, data = agent.call("TaskGet", {"taskId": task_id, "plan": plan})
    assert ok, text
    return dict(data["task"])


def test_exactly_one_of_eight_wins_every_round(agents: list[Agent]) -> None:
    plan = make_plan(agents[0])
    tally: dict[str, int] = {}
    for r in range(ROUNDS):
        tid = new_task(agents[r % AGENTS], plan, f"round {r}")
        # Half the rounds with a lease: a lease never lets a second claimant in while it runs.
        winner = one_winner(race(agents, tid, plan, lease=600 if r % 2 else None))
        stored = task(agents[(r + 3) % AGENTS], plan, tid)
        assert (stored["status"], stored["owner"]) == ("in_progress", winner)
        tally[winner] = tally.get(winner, 0) + 1
    assert sum(tally.values()) == ROUNDS


def test_an_expired_lease_is_taken_over_by_exactly_one_other(agents: list[Agent]) -> None:
    first, others = agents[0], agents[1:]
    plan = make_plan(first)
    tid = new_task(first, plan, "leased")
    ok, text, _ = first.call(
        "TaskUpdate", {"taskId": tid, "status": "in_progress", "owner": first.name, "leaseSeconds": 1, "plan": plan}
    )
    assert ok, text
    # While it runs (at least 1 s: an expiry is rounded up), every other claim is refused.
    assert [ok for _, ok, _ in race(others, tid, plan)] == [False] * len(others)
    # It runs out: the task is listed as ready again, by a server that did not write it.
    deadline = time.monotonic() + bound(10)
    while True:
        ok, board, data = others[0].call("TaskList", {"plan": plan, "status": "ready"})
        assert ok, board
        if tid in [row["id"] for row in data["tasks"]]:
            break
        assert time.monotonic() < deadline, f"a 1 s lease was still running after {bound(10)} s: {board}"
        time.sleep(0.05)
    # ... and marked on the board, in the text and the row.
    [row] = [row for row in data["tasks"] if row["id"] == tid]
    assert row["claimable"] is True and row["status"] == "in_progress"
    assert f"#{tid} [in_progress] leased ({first.name}) {CLAIMABLE_MARK}" in board.splitlines()
    winner = one_winner(race(others, tid, plan, lease=600))  # a lease the test cannot outlive
    stored = task(others[-1], plan, tid)
    assert (stored["status"], stored["owner"]) == ("in_progress", winner)
    [handover] = stored["metadata"]["claimHistory"]
    assert (handover["owner"], handover["by"]) == (first.name, winner)
    assert handover["expiredAt"] <= handover["takenAt"]
    # The new owner holds it under its own lease; the old one cannot take it back.
    assert stored["leaseSeconds"] == 600
    ok, text, _ = first.call("TaskUpdate", {"taskId": tid, "owner": first.name, "plan": plan})
    assert not ok and f"taken over by {winner!r}" in text, text


@pytest.mark.parametrize("bad", [0, 86_401, True, 1.5, "60"])
def test_a_lease_that_is_not_a_whole_number_of_seconds_in_range_is_refused(agents: list[Agent], bad: object) -> None:
    a = agents[0]
    plan = make_plan(a)
    tid = new_task(a, plan, "bad lease")
    ok, text, _ = a.call(
        "TaskUpdate", {"taskId": tid, "status": "in_progress", "owner": a.name, "leaseSeconds": bad, "plan": plan}
    )
    assert not ok and "leaseSeconds" in text, text
    assert (task(a, plan, tid)["status"], task(a, plan, tid)["owner"]) == ("pending", "")


CLAIMERS = 32  # agents, spread over the servers: each sends one claim of the next task


def test_32_agents_claiming_the_next_task_at_once_get_32_different_tasks(agents: list[Agent]) -> None:
    """32 agents (four on each server) each send one `taskId: "next"` claim, all written
    before any answer is read: every one gets a task of its own, in one call, with no
    refusal to retry after. One more claim then hears that nothing is ready, and which
    owners' tasks the rest waits for."""
    first = agents[0]
    ok, text, data = first.call(
        "PlanCreate",
        {
            "title": "Team",
            "analysis": "a",
            "approach": "b",
            "name": "team",
            "date": "2026-05-28",
            # One more task, blocked by all the others: it waits for the 32 claims.
            "tasks": [{"subject": f"part {n}"} for n in range(CLAIMERS)]
            + [{"subject": "after all", "blockedBy": list(range(1, CLAIMERS + 1))}],
        },
    )
    assert ok, text
    plan = str(data["plan"]["name"])
    claim = {"taskId": "next", "status": "in_progress", "leaseSeconds": 600, "plan": plan}
    sent = [(n, agents[n % AGENTS]) for n in range(CLAIMERS)]
    rids = [(n, a, a.start_call("TaskUpdate", {**claim, "owner": f"claimer{n}"})) for n, a in sent]
    got: dict[str, int] = {}
    for n, a, rid in rids:
        ok, text, data = a.result(rid)
        assert ok, (n, text)
        assert text.splitlines()[0] == f"Updated task #{data['taskId']} status, owner, leaseSeconds, leaseExpiresAt"
        got[f"claimer{n}"] = int(data["taskId"])
    assert sorted(got.values()) == list(range(1, CLAIMERS + 1)), got
    ok, board, data = agents[5].call("TaskList", {"plan": plan, "status": "in_progress", "limit": 100})
    assert ok, board
    assert {row["owner"]: row["id"] for row in data["tasks"]} == got
    ok, text, _ = agents[3].call("TaskUpdate", {**claim, "owner": "latecomer"})
    waits = f"No task to claim in plan {plan}: 1 task waits for the {CLAIMERS} in progress"
    assert not ok and text.startswith(waits), text
    assert "#1 (claimer" in text and "lease runs out at" in text and "Wait, and call again" in text, text
