"""The peers part of the report: every server filled through its own tools with the
same tasks, the same calls timed, each list figure with its answer's size beside it."""

from __future__ import annotations

from collections.abc import Callable

from bench.mdtable import ms, table
from bench.measure import median
from bench.peers_run import PeerResult
from bench.results import RunResults


def _cell(p: PeerResult, f: Callable[[PeerResult], str]) -> str:
    return f"skipped: {p.skipped}" if p.skipped else f(p)


def _list(p: PeerResult) -> str:
    kind = "" if p.list_structured else ", text only"
    return f"{ms(p.listing.med)} ({p.listing.ratio:.2f}) · {p.list_chars or 0:,} chars{kind}"


def peers_section(r: RunResults) -> list[str]:
    cfg, main_n = r.cfg, r.main_n
    out = ["\n\n## Peers (same SDK client, same tasks, each filled through its own tools)\n"]
    header = ["figure", "planning-mcp", *(f"{p.name} {p.version or ''}".strip() for p in r.peers)]
    ours = r.ours_peer
    o = r.sizes[main_n]
    if ours is not None:
        mine = [
            f"{ours.size:,} in {ours.grow_s:.0f} s",
            f"{ms(ours.create.med)} / {ms(ours.create.p95)} ({ours.create.ratio:.2f})",
            f"{ms(ours.update.med)} / {ms(ours.update.p95)} ({ours.update.ratio:.2f})",
            _list(ours),
        ]
    else:  # no tool-filled run of ours: the seeded run above
        lt = o.ops["TaskList"]
        mine = [
            f"{main_n:,} (seeded)",
            f"{ms(o.ops['TaskCreate'].med)} / {ms(o.ops['TaskCreate'].p95)} ({o.ops['TaskCreate'].ratio:.2f})",
            f"{ms(o.ops['TaskUpdate status'].med)} / {ms(o.ops['TaskUpdate status'].p95)} "
            f"({o.ops['TaskUpdate status'].ratio:.2f})",
            f"{ms(lt.med)} ({lt.ratio:.2f}) · {(o.list_text or 0) + (o.list_structured or 0):,} chars",
        ]
    rows = [
        [
            "tasks reached (creates through the tool)",
            mine[0],
            *(_cell(p, lambda p: f"{p.size:,} in {p.grow_s:.0f} s") for p in r.peers),
        ],
        [
            "create, median / p95 ms (× echo)",
            mine[1],
            *(_cell(p, lambda p: f"{ms(p.create.med)} / {ms(p.create.p95)} ({p.create.ratio:.2f})") for p in r.peers),
        ],
        [
            "status → in progress, median / p95 ms (× echo)",
            mine[2],
            *(_cell(p, lambda p: f"{ms(p.update.med)} / {ms(p.update.p95)} ({p.update.ratio:.2f})") for p in r.peers),
        ],
        [
            "list all, median ms (× echo) · answer chars (text + structured)",
            mine[3],
            *(_cell(p, _list) for p in r.peers),
        ],
        [
            "tools/list, chars (tools)",
            f"{r.tools_chars:,} ({r.tools})",
            *(_cell(p, lambda p: f"{p.tools_chars:,} ({p.tools})") for p in r.peers),
        ],
        [
            "start-up → tools/list, ms",
            ms(median(r.startup_ours)),
            *(_cell(p, lambda p: ms(p.startup_s) + " (1 run)") for p in r.peers),
        ],
        [
            f"2 concurrent writers × {cfg.peer_writer_tasks}: kept / acknowledged",
            f"{r.ours_two.on_disk} / {r.ours_two.acked}" if r.ours_two else "n/a",
            *(
                _cell(p, lambda p: f"{'unreadable' if p.writers_kept is None else p.writers_kept} / {p.writers_acked}")
                for p in r.peers
            ),
        ],
    ]
    out.append(table(header, rows))
    for p in r.peers:
        if not p.skipped:
            for note in dict.fromkeys(p.notes):
                out.append(f"\n- {p.name}: {note}")
    tail = min(cfg.peer_calls, max(1, cfg.peer_target // 5))
    out.append(
        f"\n\nEvery server starts empty and gets {cfg.peer_target:,} creates through its own tool, each the task "
        "`bench/config.py` defines (subject `Task i`, description `Benchmark task number i: implement and test "
        f"item i.`, nothing else). create is the last {tail} creates (the list near its final size), status "
        f"the first {cfg.peer_calls} tasks set in progress at that size, list the whole list "
        f"({max(10, cfg.peer_calls // 10)} calls). planning-mcp: TaskCreate, TaskUpdate, TaskList with "
        "`limit: 1000`; shrimp: "
        "split_tasks(updateMode=append), execute_task, list_tasks(status=all); task-master-ai: add_task (manual, "
        "no AI), set_task_status, get_tasks. The answer's size is what a model reads: text plus the JSON of "
        "structured content."
    )
    if ours is not None:
        lt = o.ops["TaskList"]
        out[-1] += (
            f" For comparison, our list on the plan seeded on disk (per-operation table, {main_n:,} tasks with "
            f"an activeForm each): {ms(lt.med)} ms ({lt.ratio:.2f}) · "
            f"{(o.list_text or 0) + (o.list_structured or 0):,} chars."
        )
    return out
