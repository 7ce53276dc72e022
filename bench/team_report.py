"""The team benchmark's section of BENCHMARKS.md: the targets (met, missed, or why not
measured) and one row per run, generated from the run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench.machine import LOADED
from bench.mdtable import table
from bench.team_agents import CLAIM_WAIT_SECONDS

if TYPE_CHECKING:
    from bench.team_check import TeamResult
    from bench.team_config import TeamConfig
    from bench.team_plan import TeamPlan

HEADING = "## A team of agents on one plan"
TARGET_K = 16
MAX_RATIO = 1.25
MAX_WASTED = 0.05
MAX_CHARS_SHARE = 0.5  # the new way's characters per completed task against the old way's


def _f(x: float, spec: str = ".2f") -> str:
    return "n/a" if x != x else format(x, spec)


def _row(r: TeamResult) -> list[str]:
    return [
        r.store,
        r.way,
        str(r.k),
        f"{r.completed_in_store:,}/{r.tasks:,}" + ("" if r.finished else " (timed out)"),
        str(r.early_starts),
        f"{r.twice.under_lease} / {r.twice.reopened} / {r.twice.completed_twice}",
        f"{r.kills} ({r.taken_over}/{r.kills_holding}, {r.not_taken_over} lost)",
        str(r.twice.live_takeovers),
        f"{r.makespan:.1f}" if r.finished else f"> {r.makespan:.0f} (stopped)",
        f"{r.bound:.1f}",
        _f(r.ratio) if r.finished else f"> {r.ratio:.1f}",
        f"{r.completed_in_store / r.makespan:.2f}" if r.makespan else "n/a",
        f"{r.mean_duration:.3f} / {r.lease}",
        _f(r.per_task(r.wasted), ".3f"),
        f"{100 * r.lost_while_ready / r.agent_seconds:.1f}%" if r.agent_seconds else "n/a",
        _f(r.per_task(r.calls)),
        _f(r.per_task(r.chars_read), ",.0f"),
        _f(r.per_task(r.chars_written), ",.0f"),
    ]


HEADER = [
    "store",
    "way",
    "K",
    "completed",
    "early starts",
    "worked twice: under a lease / reopened / completed twice",
    "kills (taken over)",
    "live take-overs",
    "makespan s",
    "bound s",
    "× bound",
    "tasks done / s",
    "mean task s / lease s",
    "wasted / task",
    "idle while ready",
    "calls / task",
    "chars read / task",
    "chars written / task",
]


def _pick(results: list[TeamResult], **where: Any) -> list[TeamResult]:
    return [r for r in results if all(getattr(r, k) == v for k, v in where.items())]


def _targets(results: list[TeamResult], stores: tuple[str, ...]) -> list[list[str]]:
    rows = []
    for way in ("new", "old"):
        runs = _pick(results, way=way)
        if runs:
            bad = sum(r.violations for r in runs)
            what = f"{bad} in {len(runs)} runs" + (f" ({sum(r.twice.reopened for r in runs)} reopens)" if bad else "")
            rows.append([f"0 violations, {way} way (every run)", what, _met(bad == 0)])
    left = [r for r in results if r.unfinished]
    done = "; ".join(f"{r.store} {r.way} K={r.k}: {r.completed_in_store:,}/{r.tasks:,} when stopped" for r in left)
    rows.append(["every task completed (every run)", done or "all", "MISSED" if left or not results else "met"])
    k = TARGET_K if _pick(results, k=TARGET_K) else max((r.k for r in results), default=0)
    for store in stores:
        new = _pick(results, store=store, way="new", k=k)
        old = _pick(results, store=store, way="old", k=k)
        if not new:
            why = "not measured: the new way was not run" + (f" (old way: {old[0].ratio:.2f}×)" if old else "")
            rows.append([f"makespan ≤ {MAX_RATIO}× bound at K = {TARGET_K}, {store}", why, "NOT MEASURED"])
            rows.append([f"wasted calls ≤ {MAX_WASTED} / completed task, {store}", why, "NOT MEASURED"])
            rows.append([f"characters / task ≤ half the old way's, {store}", why, "NOT MEASURED"])
            continue
        n = new[0]
        span = f"{n.ratio:.2f}×" if n.finished else f"> {n.ratio:.1f}× (stopped, {n.completed_in_store:,} done)"
        rows.append(
            [f"makespan ≤ {MAX_RATIO}× bound at K = {k}, {store}", span, _met(n.finished and n.ratio <= MAX_RATIO)]
        )
        w = n.per_task(n.wasted)
        wasted = f"wasted calls ≤ {MAX_WASTED} / completed task (K = {k}), {store}"
        rows.append([wasted, f"{w:.3f}", _met(w <= MAX_WASTED)])
        if old:
            o = old[0]
            share = n.per_task(n.chars_read + n.chars_written) / o.per_task(o.chars_read + o.chars_written)
            half = f"characters / task ≤ half the old way's (K = {k}), {store}"
            rows.append([half, f"{share:.2f} of the old way's", _met(share <= MAX_CHARS_SHARE)])
    return rows


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _judged(rows: list[list[str]], notes: list[str]) -> list[list[str]]:
    """The targets' rows; on a loaded machine each status says the run is not a result."""
    if not any(n.startswith(LOADED) for n in notes):
        return rows
    return [[target, measured, f"{LOADED} (loaded)"] for target, measured, _ in rows]


def _lease_words(cfg: TeamConfig) -> str:
    floor = f"at least {cfg.lease_floor} s: on a loaded machine a renewal or a completion can wait seconds for the plan"
    if cfg.heartbeat <= 0:
        return f"The lease: 2× the longest task + 1 s ({floor}), so a killed agent's task waits that long."
    return (
        f"While it works the agent renews its lease every {cfg.heartbeat:g} s (an update naming the owner, a "
        f"heartbeat, as a hook would send it); the lease: 2× the shorter of that and the longest task + 1 s ({floor}), "
        "so a killed agent's task waits a short lease, not one as long as the longest task."
    )


def team_section(results: list[TeamResult], notes: list[str], cfg: TeamConfig, plan: TeamPlan) -> list[str]:
    edges = sum(len(b) for b in plan.blocked_by.values())
    fan_out = max(len(v) for v in plan.blocks().values()) if plan.blocked_by else 0
    out = [
        HEADING + "\n",
        "Generated by `python -m bench.team` (bench/team.py; `python -m bench.run` runs it at K = 16 only), "
        f"K = {', '.join(str(k) for k in sorted({r.k for r in results}))}: {len(results)} runs, each stopped "
        f"after {cfg.run_timeout():g} s if the plan is not done by then. Each agent is a real MCP session (the SDK's "
        "`mcp.Client` over stdio) with a planning-mcp server process and an owner name of its own; the agents "
        "are asyncio tasks of one client process. "
        f"The plan: {plan.n:,} tasks in {plan.layers} layers, {edges:,} edges (1–4 blockers a task from the "
        f"layers before, a few hubs: fan-out up to {fan_out}), seed {plan.seed}; durations lognormal "
        f"(σ = 0.6, capped at 4× the mean), scaled per K so that total work / K = {cfg.work_seconds:g} s (so "
        "every K makes about as many calls a second). Each agent loops: claim with a lease, "
        "sleep the task's duration, complete it. " + _lease_words(cfg) + " About every "
        f"{cfg.kill_every:g} s a random working agent's server is killed (`kill -9`; never twice while on one task) "
        "and a new agent (a new server, "
        "a new owner) takes its place; the killed agent's task must wait for its lease to run out and be taken over.",
        "",
        '- **new way**: `TaskUpdate` with `taskId: "next"`, `status: "in_progress"`, `owner`, `leaseSeconds` '
        f"and `waitSeconds: {CLAIM_WAIT_SECONDS}` (one call, which waits for a task to become ready). **old way**: "
        "`TaskList status=ready`, claim the first row by id (`TaskUpdate`); on a refusal, list again. Nothing "
        "ready (the old way, or the new way's wait ending empty): the agent waits (¼ of a mean task, doubling to "
        "2×) and asks again.",
        "- Judged from the run's own log (client-side times) and the store's final state: *early starts* = "
        "claims acknowledged before a blocker's completion was sent; *worked twice* = a second owner's claim "
        "before the first owner's lease could have run out / a task claimed again by another owner after its "
        "completion was sent (a stale ready list: the claim reopens it, as the contract allows) / more completions "
        "than owners who held it; *kills (taken over)* = "
        "kills, and of the kills of an agent holding a task, those whose task another owner then claimed, and "
        "those no one claimed although the lease had run out a lease's length before the run "
        "stopped (lost); *live take-overs* = tasks taken from an agent that was not killed (its lease ran out while "
        "it worked; allowed, but a sign the lease was short). *bound* = max(critical path, total work / K); "
        "*wasted* = refusals and empty answers (an empty ready list, nothing to claim); *idle while ready* = "
        "the agent-seconds during which an agent was not working (its calls included) while a task was ready "
        "and unclaimed (∫ min(idle agents, ready tasks)), as a share of K × makespan; characters as "
        "bench/peers/peers.py counts them (read: answer text + structured JSON; written: the call's name "
        "and arguments as JSON).",
        *(f"- {n}" for n in notes),
        "",
        table(["target", "measured", "status"], _judged(_targets(results, cfg.stores), notes)),
        "",
        table(HEADER, [_row(r) for r in results]) if results else "(no run)",
    ]
    return out


def replace_section(text: str, section: str) -> str:
    """`text` with its team section replaced by `section` (added before the History
    section, or at the end, when it has none)."""
    body = section.rstrip("\n") + "\n"
    start = text.find(HEADING)
    if start >= 0:
        end = text.find("\n## ", start + len(HEADING))
        rest = text[end + 1 :] if end >= 0 else ""
        return text[:start] + body + ("\n" + rest if rest else "")
    history = text.find("\n## History")
    if history >= 0:
        return text[: history + 1] + body + "\n" + text[history + 1 :]
    return text.rstrip("\n") + "\n\n" + body
