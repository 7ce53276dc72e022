"""What a team run proved and cost, judged from its own event log (client-side times)
and the store's final state: correctness (every task completed, none started before
its blockers, none worked twice but after an expired lease, every kill's task taken
over), efficiency (makespan against the lower bound, wasted calls, agent time lost while
work was ready) and the cost to the model (calls, characters read and written)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass

from bench.team_agents import Claim, Done, Log, Team
from bench.team_plan import TeamPlan

WASTED = ("refused", "empty")


@dataclass
class TeamResult:
    store: str
    way: str
    k: int
    tasks: int
    finished: bool  # the plan was done before the run's deadline
    completed_in_store: int
    early_starts: int  # claims acknowledged before a blocker's completion was even sent
    twice: Twice  # tasks worked by more than one owner
    kills: int
    kills_holding: int  # kills of an agent that was working on a task
    taken_over: int  # of those, tasks another owner claimed after the kill
    not_taken_over: int  # of those, tasks no one claimed although the lease had long run out
    makespan: float
    bound: float
    critical_path: float
    mean_duration: float
    lease: int
    calls: int
    wasted: int
    chars_read: int
    chars_written: int
    lost_while_ready: float  # agent-seconds idle while a task was ready and unclaimed
    agent_seconds: float  # K × makespan
    note: str = ""

    @property
    def unfinished(self) -> int:
        return self.tasks - self.completed_in_store

    @property
    def violations(self) -> int:
        """What must never happen, however slow the run (unfinished tasks are counted apart)."""
        return self.early_starts + self.twice.violations + self.not_taken_over

    @property
    def ratio(self) -> float:
        return self.makespan / self.bound if self.bound else float("nan")

    def per_task(self, x: float) -> float:
        return x / self.completed_in_store if self.completed_in_store else float("nan")


def early_starts(plan: TeamPlan, log: Log) -> int:
    """Claims acknowledged before any completion of one of their blockers was sent (or with
    a blocker never completed): the server let a task start too soon, surely."""
    first_sent: dict[int, float] = {}
    for d in log.dones:
        first_sent[d.task] = min(first_sent.get(d.task, d.t0), d.t0)
    for call in log.calls:  # a completion whose answer was lost (its server died) may have been made
        if call.outcome == "broken" and call.task is not None:
            first_sent[call.task] = min(first_sent.get(call.task, call.t0), call.t0)
    claims = log.claims
    bad = 0
    for c in claims:
        if any(first_sent.get(b, float("inf")) > c.t1 for b in plan.blocked_by[c.task]):
            bad += 1
    return bad


@dataclass
class Twice:
    """Tasks worked by more than one owner, by why."""

    under_lease: int = 0  # claimed by a second owner before the first owner's lease could have run out
    reopened: int = 0  # claimed again by a second owner after the first's completion was sent (worked twice)
    completed_twice: int = 0  # more completions than owners who held it
    live_takeovers: int = 0  # taken after the lease of an owner that was not killed ran out (allowed)

    @property
    def violations(self) -> int:
        return self.under_lease + self.reopened + self.completed_twice


def worked_twice(claims: list[Claim], dones: list[Done], killed: set[str], lease: int) -> Twice:
    """A task may be worked twice only after an expired lease: judged pair by pair of its
    successive claims by different owners (client times: a claim is made between its call's
    t0 and t1, and a lease lasts at least `lease` seconds from it, or from its last renewal)."""
    by_task: dict[int, list[Claim]] = defaultdict(list)
    for c in claims:
        by_task[c.task].append(c)
    sent: dict[tuple[int, str], Done] = {}
    completions: dict[int, int] = defaultdict(int)
    for d in dones:
        if (d.task, d.owner) not in sent or d.t0 < sent[(d.task, d.owner)].t0:
            sent[(d.task, d.owner)] = d
        completions[d.task] += 1
    out = Twice()
    for tid, cs in by_task.items():
        cs.sort(key=lambda c: c.t1)
        for before, after in itertools.pairwise(cs):
            if after.owner != before.owner:
                _judge_pair(out, before, after, sent.get((tid, before.owner)), killed, lease)
        owners = len({c.owner for c in cs})
        out.completed_twice += max(0, completions[tid] - owners)
    return out


def _judge_pair(out: Twice, before: Claim, after: Claim, done: Done | None, killed: set[str], lease: int) -> None:
    """One hand-over of a task from `before`'s owner to `after`'s. While the first lease surely
    ran only a completed task could be claimed again (a reopen); once it may have run out, a
    completion still in flight is a take-over racing it, not a reopen."""
    lease_ran = after.t1 < before.lease_from + lease
    completing = done is not None and done.t0 < after.t1
    completed = done is not None and done.t1 < after.t0
    if completing and (lease_ran or completed):
        out.reopened += 1  # a stale ready list: the claim reopened a completed task
    elif lease_ran:
        out.under_lease += 1
    elif before.owner not in killed:
        out.live_takeovers += 1


def taken_over(team: Team) -> tuple[int, int, int]:
    """(kills of an agent holding a task; of those, tasks another owner claimed after the kill;
    and those left alone although their lease had run out a lease's length before the run
    stopped: the ones no one took over)."""
    holding = [k for k in team.log.kills if k.task is not None]
    ok = lost = 0
    for k in holding:
        if any(c.task == k.task and c.owner != k.owner and c.t1 > k.t for c in team.log.claims):
            ok += 1
            continue
        mine = [c for c in team.log.claims if c.task == k.task and c.owner == k.owner]
        lease_end = max((c.lease_end for c in mine), default=k.t)
        if lease_end + team.s.lease < team.t_stop:
            lost += 1
    return len(holding), ok, lost


def _ready_deltas(plan: TeamPlan, log: Log, t_go: float) -> list[tuple[float, int]]:
    """+1 when a task becomes ready and unclaimed (its last blocker's completion acknowledged,
    or its killed owner's lease ran out), -1 when it is claimed."""
    done_at: dict[int, float] = {}
    for d in log.dones:
        done_at[d.task] = min(done_at.get(d.task, d.t1), d.t1)
    killed_owner = {k.owner for k in log.kills}
    claims: dict[int, list[Claim]] = defaultdict(list)
    for c in log.claims:
        claims[c.task].append(c)
    out: list[tuple[float, int]] = []
    for tid, before in plan.blocked_by.items():
        ready = max([t_go, *(done_at.get(b, float("inf")) for b in before)])
        for c in sorted(claims[tid], key=lambda c: c.t1):
            if ready < c.t1:
                out += [(ready, 1), (c.t1, -1)]
            finished = tid in done_at and done_at[tid] <= c.lease_end
            ready = c.lease_end if c.owner in killed_owner and not finished else float("inf")
        if ready != float("inf") and tid not in done_at:
            out.append((ready, 1))
    return out


def _idle_deltas(log: Log, t_end: float) -> list[tuple[float, int]]:
    """+1 when a live agent stops working (claim calls and waits included), -1 when it starts."""
    work: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for d in log.dones:
        work[d.owner].append((d.work_start, d.t0))
    claims_by_owner: dict[str, list[Claim]] = defaultdict(list)
    for c in log.claims:
        claims_by_owner[c.owner].append(c)
    kills = {k.owner: k.t for k in log.kills}
    out: list[tuple[float, int]] = []
    for life in log.lives:
        end = min(life.end or t_end, kills.get(life.owner, t_end), t_end)
        spans = sorted(work[life.owner])
        if life.owner in kills and claims_by_owner[life.owner]:
            last = max(claims_by_owner[life.owner], key=lambda c: c.t1)
            if not spans or last.t1 > spans[-1][1]:
                spans.append((last.t1, end))  # killed while working on it
        at = life.start
        for a, b in spans:
            if a > at:
                out += [(at, 1), (min(a, end), -1)]
            at = max(at, b)
        if at < end:
            out += [(at, 1), (end, -1)]
    return out


def lost_while_ready(plan: TeamPlan, log: Log, t_go: float, t_end: float) -> float:
    """Agent-seconds in which an agent was idle while a task was ready for it: the integral
    of min(idle live agents, ready unclaimed tasks) over the run."""
    events = sorted(
        [(t, r, 0) for t, r in _ready_deltas(plan, log, t_go)] + [(t, 0, i) for t, i in _idle_deltas(log, t_end)]
    )
    ready = idle = 0
    lost, last = 0.0, t_go
    for t, dr, di in events:
        t = min(max(t, t_go), t_end)
        lost += (t - last) * min(max(ready, 0), max(idle, 0))
        ready, idle, last = ready + dr, idle + di, t
    return lost


def judge(plan: TeamPlan, team: Team, finished: bool, statuses: dict[int, str], store: str) -> TeamResult:
    s, log = team.s, team.log
    t_end = max((d.t1 for d in log.dones), default=team.t_go)
    makespan = t_end - team.t_go
    killed = {k.owner for k in log.kills}
    holding, over, lost = taken_over(team)
    return TeamResult(
        store=store,
        way=s.way,
        k=s.k,
        tasks=plan.n,
        finished=finished,
        completed_in_store=sum(1 for v in statuses.values() if v == "completed"),
        early_starts=early_starts(plan, log),
        twice=worked_twice(log.claims, log.dones, killed, s.lease),
        kills=len(log.kills),
        kills_holding=holding,
        taken_over=over,
        not_taken_over=lost,
        makespan=makespan,
        bound=plan.bound(s.durations, s.k),
        critical_path=plan.critical_path(s.durations),
        mean_duration=s.mean,
        lease=s.lease,
        calls=len(log.calls),
        wasted=sum(1 for c in log.calls if c.outcome in WASTED),
        chars_read=sum(c.read for c in log.calls),
        chars_written=sum(c.written for c in log.calls),
        lost_while_ready=lost_while_ready(plan, log, team.t_go, t_end),
        agent_seconds=s.k * makespan,
    )
