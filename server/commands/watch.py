"""`planning-mcp watch`: a live terminal view of the active plans.

One panel per plan: a progress bar, the tasks in progress (with owner), what is
ready to start next, and anything unreadable. The view follows the store's change feed
(the file store's OS watcher, the database's LISTEN/NOTIFY) and redraws when any process
changes a plan, at once; without a feed it polls the plan versions every --interval.
It never writes.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Iterator

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from planning_core import PlanningError, PlanSnapshot, TaskStatus
from planning_core.actions import Actions
from planning_core.safetext import escape as plain
from planning_core.store import PlanStore
from planning_core.taskgraph import graph

from ..common.changes import follow
from ..common.cli_common import EXIT_OK

# Every text from a plan folder goes through plain() (task files and plan.md are hand-
# editable: an ESC must not reach the terminal) and into a Text object, never a markup
# string, so `[red]` in a subject is shown as typed.

MAX_READY_SHOWN = 3
FULL_REREAD = 5.0  # seconds


def plan_panel(snap: PlanSnapshot) -> Panel:
    p = snap.progress()
    pct = round(100 * p.completed / p.total) if p.total else 0
    ready = graph.ready_ids(snap)
    blocked = graph.blocked_ids(snap)

    bar = Table.grid(padding=(0, 1), expand=True)
    bar.add_column(ratio=1)
    bar.add_column(no_wrap=True, justify="right")
    bar.add_row(
        ProgressBar(total=max(p.total, 1), completed=p.completed, complete_style="green", finished_style="green"),
        Text(f"{p.completed}/{p.total} done  {pct:3d}%", style="bold"),
    )
    counts = Text(
        f"in progress {p.in_progress} · ready {len(ready)} · blocked {len(blocked)}"
        + (f" · unreadable {len(snap.corrupt)}" if snap.corrupt else ""),
        style="dim",
    )
    rows: list[RenderableType] = [bar, counts]
    running = sorted((t for t in snap.tasks.values() if t.status is TaskStatus.IN_PROGRESS), key=lambda t: t.id)
    for t in running:
        line = Text("▶ ", style="yellow")
        line.append(f"#{t.id} {plain(t.subject)}", style="bold yellow")
        if t.owner:
            line.append(f"  ({plain(t.owner)})", style="cyan")
        if t.active_form and t.active_form != t.subject:
            line.append(f"  {plain(t.active_form)}…", style="dim")
        rows.append(line)
    if ready:
        shown = ", ".join(f"#{i} {plain(snap.tasks[i].subject)}" for i in ready[:MAX_READY_SHOWN])
        more = f" (+{len(ready) - MAX_READY_SHOWN} more)" if len(ready) > MAX_READY_SHOWN else ""
        rows.append(Text(f"next: {shown}{more}", style="dim"))
    if p.finished:
        rows.append(Text("✓ all tasks done: verify against plan.md, then PlanArchive", style="green"))
    for c in snap.corrupt:
        rows.append(Text(f"! #{c.task_id} {plain(c.file)} is unreadable: {plain(c.reason)}", style="red"))
    return Panel(
        Group(*rows),
        title=Text(snap.name, style="bold"),
        title_align="left",
        subtitle=Text(plain(snap.title), style="dim"),
        subtitle_align="left",
        border_style="green" if p.finished else "blue",
    )


def frame(actions: Actions, seen: str = "", live: bool = True) -> RenderableType:
    """Everything on screen at one moment."""
    panels: list[RenderableType] = []
    problems: list[str] = []
    for name in actions.active_plans():
        try:
            panels.append(plan_panel(actions.snapshot(name)))
        except PlanningError:
            continue  # archived or removed between listing and reading
        except OSError as e:
            problems.append(plain(f"{name}: {e.strerror or e}"))
    head = Text("planning-mcp watch", style="bold")
    head.append(f"  {actions.describe()}", style="dim")
    head.append(f"  {len(panels)} active plan{'s' if len(panels) != 1 else ''}")
    if seen:
        head.append(f"  last change {seen}", style="dim")
    parts: list[RenderableType] = [head]
    if not panels and not problems:
        parts.append(Text("(no active plans; they appear here as soon as an agent calls PlanCreate)", style="dim"))
    parts += panels
    parts += [Text(f"! {p}", style="red") for p in problems]
    if live:
        parts.append(Text("Ctrl-C to quit", style="dim"))
    return Group(*parts)


def _versions(store: PlanStore) -> object:
    try:
        return store.plan_versions()
    except (OSError, PlanningError):
        return None


def _ticks(store: PlanStore, interval: float) -> Iterator[bool]:
    """One item per moment to look again: True when the store's feed named a changed
    plan (changes.follow: the feed, which also yields every `interval`, else a poll every
    `interval`)."""
    for tick in follow(store, threading.Event(), feed_wait=interval, poll_every=interval):
        yield bool(tick.names)


def watch(
    store: PlanStore, actions: Actions, interval: float = 1.0, once: bool = False, console: Console | None = None
) -> int:
    """`store`'s changes followed (server/common/changes.py), its plans read through `actions`."""
    console = console or Console()
    if once:
        console.print(frame(actions, live=False))
        return EXIT_OK
    versions = _versions(store)
    seen = dt.datetime.now().strftime("%H:%M:%S")
    try:
        if not console.is_terminal:
            # Piped or logged: one frame per change, no cursor movement.
            console.print(frame(actions, seen))
            for named in _ticks(store, interval):
                current = _versions(store)
                if named or current != versions:
                    versions, seen = current, dt.datetime.now().strftime("%H:%M:%S")
                    console.print(frame(actions, seen))
        last_read = time.monotonic()
        with Live(frame(actions, seen), console=console, screen=True, auto_refresh=False) as live:
            for named in _ticks(store, interval):
                current = _versions(store)
                if named or current != versions:
                    versions, seen = current, dt.datetime.now().strftime("%H:%M:%S")
                    live.update(frame(actions, seen), refresh=True)
                    last_read = time.monotonic()
                elif time.monotonic() - last_read > FULL_REREAD:
                    # Two writes inside one mtime tick look like one: re-read now and then anyway.
                    live.update(frame(actions, seen), refresh=True)
                    last_read = time.monotonic()
                else:
                    live.refresh()  # follows terminal resizes
    except KeyboardInterrupt:
        return EXIT_OK
    return EXIT_OK
