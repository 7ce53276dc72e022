"""Promise: a team on one store through real server processes. An agent that lost its
task (its process paused past its lease, or killed and started again) cannot undo the
work of the agent that took it over: its update is refused naming the new owner, while
the new owner's heartbeat keeps working. Files and PostgreSQL."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from planning_core.stores.postgres.schema import PLANS
from tests.support.agent_stdio import Agent
from tests.support.procs import stop
from tests.support.store_urls import SERVED_KINDS, store_url
from tests.support.waits import bound


class Team:
    """Agents started on demand on one store, each stopped at the end."""

    def __init__(self, url: str, here: Path) -> None:
        self.url, self.here = url, here
        self.started: list[Agent] = []

    def agent(self, name: str) -> Agent:
        a = Agent(name, self.url, self.here, self.here / f"{name}-{len(self.started)}.log")
        self.started.append(a)
        a.initialize()
        return a


@pytest.fixture(params=SERVED_KINDS)
def team(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Team]:
    made = Team(store_url(request.param, tmp_path), tmp_path)
    try:
        yield made
    finally:
        for a in made.started:
            if a.proc.poll() is None:
                os.kill(a.proc.pid, signal.SIGCONT)  # a paused one could not be stopped
            stop(a.proc)


def make_plan(agent: Agent, tasks: list[dict[str, Any]]) -> str:
    ok, text, data = agent.call(
        "PlanCreate",
        {"title": "Team", "analysis": "a", "approach": "b", "name": "team", "date": "2026-05-28", "tasks": tasks},
    )
    assert ok, text
    return str(data["plan"]["name"])


def claim(agent: Agent, plan: str, owner: str, lease: int, **more: Any) -> tuple[bool, str, dict[str, Any]]:
    args = {"taskId": "next", "status": "in_progress", "owner": owner, "leaseSeconds": lease, "plan": plan}
    return agent.call("TaskUpdate", {**args, **more})


def wait_ready(agent: Agent, plan: str, task_id: int) -> None:
    """Until `agent` lists the task as ready (a lease ran out): the plan's own answer."""
    deadline = time.monotonic() + bound(10)
    while True:
        ok, board, data = agent.call("TaskList", {"plan": plan, "status": "ready"})
        assert ok, board
        if task_id in [row["id"] for row in data["tasks"]]:
            return
        assert time.monotonic() < deadline, f"#{task_id} not ready after {bound(10)} s: {board}"
        time.sleep(0.05)


def test_a_paused_agent_resumed_after_a_take_over_cannot_undo_it(team: Team) -> None:
    alice, bob = team.agent("alice"), team.agent("bob")
    plan = make_plan(alice, [{"subject": "only task"}])
    ok, text, data = claim(alice, plan, "alice", 1)
    assert ok and data["taskId"] == 1, text
    os.kill(alice.proc.pid, signal.SIGSTOP)  # alice's process stops mid-task
    wait_ready(bob, plan, 1)
    ok, text, data = claim(bob, plan, "bob", 600)
    assert ok and data["taskId"] == 1, text
    os.kill(alice.proc.pid, signal.SIGCONT)
    # alice's late calls, naming herself or not (her server knows her claim), change nothing.
    for late in (
        {"status": "completed"},
        {"status": "pending", "owner": "alice"},
        {"description": "done, I think"},
        {"owner": "alice"},
    ):
        ok, text, _ = alice.call("TaskUpdate", {"taskId": 1, "plan": plan, **late})
        assert not ok and "taken over by 'bob'" in text and "lease of 'alice' ran out" in text, (late, text)
    ok, text, _ = bob.call("TaskUpdate", {"taskId": 1, "plan": plan, "owner": "bob"})
    assert ok and text.startswith("Updated task #1"), text  # renewed (the same second: the same expiry)
    # alice's process dies; started again, she names herself: still refused.
    stop(alice.proc)
    again = team.agent("alice")
    ok, text, _ = again.call("TaskUpdate", {"taskId": 1, "plan": plan, "status": "completed", "owner": "alice"})
    assert not ok and "taken over by 'bob'" in text, text
    ok, text, data = bob.call("TaskUpdate", {"taskId": 1, "plan": plan, "status": "completed"})
    assert ok and data["status"] == "completed", text
    ok, text, data = again.call("TaskGet", {"taskId": 1, "plan": plan})
    assert ok and (data["task"]["status"], data["task"]["owner"]) == ("completed", "bob"), text


WRITERS = 8
NOTES_EACH = 5


def test_no_note_is_lost_when_8_agents_write_at_once(team: Team) -> None:
    """Eight servers append notes to one task, every request written before any answer is
    read: each note acknowledged is kept. (One server runs a writer's calls in flight side
    by side, so their order between themselves is the order they reached the plan.)"""
    writers = [team.agent(f"w{i}") for i in range(WRITERS)]
    plan = make_plan(writers[0], [{"subject": "shared"}])
    sent = [
        (w, w.start_call("TaskUpdate", {"taskId": 1, "plan": plan, "note": f"{w.name} {n}"}))
        for n in range(NOTES_EACH)
        for w in writers
    ]
    for w, rid in sent:
        ok, text, _ = w.result(rid)
        assert ok and text == "Updated task #1 notes", (w.name, text)
    ok, text, data = writers[-1].call("TaskGet", {"taskId": 1, "plan": plan})
    assert ok, text
    texts = [n["text"] for n in data["task"]["notes"]]
    assert sorted(texts) == sorted(f"{w.name} {n}" for w in writers for n in range(NOTES_EACH))


WAIT = 50  # waitSeconds: the most a claim waits; an answer far before it came from a change
PROGRESS = "notifications/progress"


def start_waiting(agent: Agent, plan: str, owner: str, token: str, **more: Any) -> int:
    """A claim of the next task that waits, with a progressToken; returns once the server
    says it waits (its first progress notification: the handshake)."""
    args = {"taskId": "next", "status": "in_progress", "owner": owner, "plan": plan, "waitSeconds": WAIT, **more}
    rid = agent.send("tools/call", {"name": "TaskUpdate", "arguments": args, "_meta": {"progressToken": token}})
    first = agent.notice(PROGRESS)
    assert first["params"]["progressToken"] == token and first["params"]["total"] == WAIT, first
    assert "Waiting for a task" in first["params"]["message"], first
    return rid


def test_a_waiting_claim_returns_once_a_task_becomes_ready(team: Team) -> None:
    alice, bob = team.agent("alice"), team.agent("bob")
    plan = make_plan(alice, [{"subject": "first"}, {"subject": "then", "blockedBy": [1]}])
    ok, text, _ = claim(alice, plan, "alice", 600)
    assert ok, text
    rid = start_waiting(bob, plan, "bob", "w1")
    began = time.monotonic()
    ok, text, _ = alice.call("TaskUpdate", {"taskId": 1, "plan": plan, "status": "completed"})
    assert ok, text
    ok, text, data = bob.result(rid)
    took = time.monotonic() - began
    print(f"a waiting claim answered {took:.3f} s after the task became ready")  # shown with -s
    assert ok and data["taskId"] == 2 and "Claimed: #2 then" in text, text
    # Woken by the change (the only other way out is waitSeconds running out).
    assert took < min(bound(1), WAIT / 2), f"answered {took:.2f} s after the task became ready"
    # No tries while it waited: one request, and at most a progress note every 5 s.
    assert len([n for n in bob.notices if n["method"] == PROGRESS]) <= took / 5 + 1


def test_a_waiting_claim_takes_a_task_whose_lease_runs_out(team: Team) -> None:
    """No write happens when a lease runs out: the claim wakes at its end by itself."""
    alice, bob = team.agent("alice"), team.agent("bob")
    plan = make_plan(alice, [{"subject": "only"}])
    # The lease must outlast bob's first look (the handshake of a claim that waits): a bound.
    lease = max(2, round(bound(1)))
    ok, text, _ = claim(alice, plan, "alice", lease)  # and alice goes quiet
    assert ok, text
    rid = start_waiting(bob, plan, "bob", "w2")
    ok, text, data = bob.result(rid)
    assert ok and data["taskId"] == 1, text
    ok, text, data = bob.call("TaskGet", {"taskId": 1, "plan": plan})
    assert data["task"]["owner"] == "bob" and data["task"]["metadata"]["claimHistory"][0]["owner"] == "alice"


@pytest.mark.parametrize("leaving", ["cancel", "disconnect"])
def test_a_waiting_claim_the_client_leaves_holds_nothing(team: Team, leaving: str) -> None:
    alice, bob, carol = team.agent("alice"), team.agent("bob"), team.agent("carol")
    plan = make_plan(alice, [{"subject": "first"}, {"subject": "then", "blockedBy": [1]}])
    ok, text, _ = claim(alice, plan, "alice", 600)
    assert ok, text
    rid = start_waiting(bob, plan, "bob", "w3")
    if leaving == "cancel":
        bob.send("notifications/cancelled", {"requestId": rid, "reason": "the user stopped"}, notify=True)
        # Still serving, and its request is gone: a call after the cancel is answered.
        ok, text, _ = bob.call("TaskList", {"plan": plan})
        assert ok, text
    else:
        assert bob.proc.stdin is not None
        bob.proc.stdin.close()
        assert bob.proc.wait(timeout=bound(10)) == 0, bob.log.read_text()
    ok, text, _ = alice.call("TaskUpdate", {"taskId": 1, "plan": plan, "status": "completed"})
    assert ok, text
    ok, text, data = claim(carol, plan, "carol", 600)
    assert ok and data["taskId"] == 2, text  # bob's wait took nothing
    ok, text, data = carol.call("TaskGet", {"taskId": 2, "plan": plan})
    assert data["task"]["owner"] == "carol" and "claimHistory" not in data["task"]["metadata"], text


WOKEN = 6  # agents that one ready task wakes at once


def _lock_waiters(url: str) -> list[str]:
    """The statements of the backends now waiting for a lock in the database at `url`."""
    with psycopg.connect(url, autocommit=True) as conn:
        sql = "SELECT query FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        return [str(r[0]) for r in conn.execute(sql).fetchall()]


@contextlib.contextmanager
def plan_held(url: str) -> Iterator[None]:
    """The plan's row locked by another writer (this test) while the block runs."""
    with psycopg.connect(url) as conn:
        conn.execute(f"SELECT 1 FROM {PLANS} FOR UPDATE")
        yield
        conn.rollback()


def test_agents_woken_by_one_ready_task_make_one_claim_and_wait_again(team: Team) -> None:
    """One task becomes ready (a lease runs out) while several agents wait for one: one
    claims it, the others go on waiting (no refusal, no error), and each takes a later
    task. On PostgreSQL, while another writer holds the plan, the woken claims wait it out
    without queueing for the plan's lock (a queued claim would take the plan in turn only
    to find the task gone)."""
    # Alice holds #1 under a long lease while the six waits begin (however slow the machine),
    # then shortens it: the waiting claims hear of the change and wake at its new end.
    lease = int(bound(1)) + 1
    names = [f"a{i}" for i in range(WOKEN)]
    alice, *agents = team.agent("alice"), *(team.agent(n) for n in names)
    tasks = [{"subject": "first"}, *({"subject": f"later {i}", "blockedBy": [1]} for i in range(WOKEN - 1))]
    plan = make_plan(alice, tasks)
    ok, text, _ = claim(alice, plan, "alice", 600)
    assert ok, text
    waiting = {a.name: start_waiting(a, plan, a.name, f"t-{a.name}", leaseSeconds=600) for a in agents}
    ok, text, _ = alice.call("TaskUpdate", {"taskId": 1, "plan": plan, "owner": "alice", "leaseSeconds": lease})
    assert ok, text  # and alice goes quiet
    pg = team.url if "://" in team.url else None
    with plan_held(pg) if pg else contextlib.nullcontext():
        if pg:  # at alice's lease end every agent tries: each waits the holder out, none queued for the plan
            deadline = time.monotonic() + lease + bound(10)
            while len(held := _lock_waiters(pg)) < WOKEN and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(held) == WOKEN and all("FOR SHARE" in q for q in held), held
    deadline = time.monotonic() + lease + bound(10)
    while (owner := alice.call("TaskGet", {"taskId": 1, "plan": plan})[2]["task"]["owner"]) == "alice":
        assert time.monotonic() < deadline, "nobody took #1 over after alice's lease"
        time.sleep(0.05)
    winner = next(a for a in agents if a.name == owner)
    ok, text, data = winner.result(waiting.pop(owner))
    assert ok and data["taskId"] == 1, text
    ok, text, _ = winner.call("TaskUpdate", {"taskId": 1, "plan": plan, "status": "completed"})
    assert ok, text
    taken = {}
    for a in agents:
        if a.name in waiting:  # still waiting after #1 was claimed: each takes a later task now
            ok, text, data = a.result(waiting[a.name])
            assert ok and "Claimed" in text, text
            taken[a.name] = data["taskId"]
    assert sorted(taken.values()) == list(range(2, WOKEN + 1)), taken
