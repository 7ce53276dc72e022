"""A plan's history: what each write changed, who made it, when.

Every store records, with the write itself, one `Entry` per transaction that changed
something: when (UTC), by whom (the session or command that wrote), and its `Event`s, one
per task it changed (or one for the plan: created, archived). The events are derived here,
once for every store, from the tasks as they were and as they are staged (`change_events`),
so what is recorded is exactly what is written. Reading is the optional `History` ability
of the seam (planning_core/store.py); rendering for people is `event_line` and
`since_summary`.

Who wrote is passed to the store's write as an argument (`by`, from the `Caller` of the
action, planning_core/caller.py): a session's key or its client's name, a command's name;
no one named is `NOBODY`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .caller import NOBODY
from .errors import InvalidInput
from .safetext import escape
from .verify import describe

if TYPE_CHECKING:
    from .models import Task

TASK_EVENTS_SHOWN = 3  # TaskGet's last events of the task
PAGE_DEFAULT = 50  # a page of a plan's log (`planning-mcp log`)
PAGE_MAX = 1000
EVERYTHING = "0000-01-01T00:00:00.000Z"  # events_since from the beginning: every kept event
SINCE_LINES = 12  # "since you were last here": at most this many lines of tasks
SINCE_DEFAULT_SECONDS = 24 * 3600.0  # when the session was never here before

# Fields whose changes are events of their own (or mirrors, not changes: `blocks` follows
# `blockedBy`; timestamps and a lease move with every claim).
_OWN = frozenset({"id", "status", "owner", "blockedBy", "blocks", "updatedAt", "createdAt", "verification"})
_LEASE = frozenset({"leaseSeconds", "leaseExpiresAt"})
METADATA = "metadata"  # set key by key: an event names each key a change set as `metadata.<key>`
DIGEST_CHARS = 16  # of a value's sha256, in hex: what an event keeps of a value it set


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Event:
    """One change of one task, or of the plan (task None). `op`: created, updated,
    deleted (a task); plan-created, archived (the plan)."""

    op: str
    task: int | None = None
    subject: str = ""
    status: tuple[str, str] | None = None  # (from, to)
    owner: tuple[str, str] | None = None
    took_over: str = ""  # an in-progress task taken from this owner (its lease ran out)
    owned_by: str = ""  # the task's owner after the change (who completed it, say)
    blocked_by_added: list[int] = field(default_factory=list)
    blocked_by_removed: list[int] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)  # other fields that changed
    tasks: int = 0  # plan-created: how many tasks the plan began with
    checks: str = ""  # a run of the task's checks, as verify.describe says it
    # What each of `fields` (metadata: each key changed) was set to, as value_digest: merges
    # find when a value was set (gitmerge), without the log holding every text twice.
    values: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"op": self.op}
        if self.task is not None:
            d["task"] = self.task
        if self.subject:
            d["subject"] = self.subject
        for key, value in (("status", self.status), ("owner", self.owner)):
            if value is not None:
                d[key] = list(value)
        optional = (
            ("tookOver", self.took_over),
            ("ownedBy", self.owned_by),
            ("blockedByAdded", self.blocked_by_added),
            ("blockedByRemoved", self.blocked_by_removed),
            ("fields", self.fields),
            ("tasks", self.tasks),
            ("checks", self.checks),
            ("set", self.values),
        )
        d.update((k, v) for k, v in optional if v)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Event:
        def pair(v: Any) -> tuple[str, str] | None:
            return (str(v[0]), str(v[1])) if isinstance(v, list) and len(v) == 2 else None

        def ids(v: Any) -> list[int]:
            return [i for i in v if isinstance(i, int)] if isinstance(v, list) else []

        task = d.get("task")
        values = d.get("set")
        return cls(
            op=str(d.get("op", "")),
            task=task if isinstance(task, int) else None,
            subject=str(d.get("subject", "")),
            status=pair(d.get("status")),
            owner=pair(d.get("owner")),
            took_over=str(d.get("tookOver", "")),
            owned_by=str(d.get("ownedBy", "")),
            blocked_by_added=ids(d.get("blockedByAdded")),
            blocked_by_removed=ids(d.get("blockedByRemoved")),
            fields=[str(f) for f in d.get("fields", []) if isinstance(f, str)],
            tasks=int(d["tasks"]) if isinstance(d.get("tasks"), int) else 0,
            checks=str(d.get("checks", "")),
            values={str(k): str(v) for k, v in values.items()} if isinstance(values, dict) else {},
        )


@dataclass
class Entry:
    """What one transaction recorded: when, by whom, its events (in the order made)."""

    at: str
    by: str
    events: list[Event]

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "by": self.by, "events": [e.to_dict() for e in self.events]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Entry:
        events = d.get("events")
        return cls(
            at=str(d.get("at", "")),
            by=str(d.get("by", NOBODY)),
            events=[Event.from_dict(e) for e in events if isinstance(e, dict)] if isinstance(events, list) else [],
        )

    @classmethod
    def now(cls, events: list[Event], by: str) -> Entry:
        return cls(at=utc_now(), by=by, events=events)


@dataclass
class Logged:
    """One event as read back: the event, its entry's time and author, its plan, and the
    cursor that pages on from it (newest first)."""

    plan: str
    at: str
    by: str
    event: Event
    cursor: str = ""


# -- reading back, newest first (every store's entries numbered by `seq`) ----------------

Numbered = Iterable[tuple[int, Entry]]  # (seq, entry), newest first


def expand(plan: str, seq: int, entry: Entry) -> Iterator[Logged]:
    """The entry's events, newest first, each with the cursor that pages on after it."""
    for k, event in enumerate(reversed(entry.events)):
        yield Logged(plan, entry.at, entry.by, event, cursor=f"{seq}.{k}")


def parse_cursor(cursor: str) -> tuple[int, int]:
    try:
        seq, k = cursor.split(".")
        return int(seq), int(k)
    except ValueError:
        raise InvalidInput(f"cursor {cursor!r} is not one this log gave; start without a cursor") from None


def page_of(plan: str, entries: Numbered, limit: int, cursor: str | None) -> tuple[list[Logged], str | None]:
    """A page of `limit` events after `cursor`, and the next page's cursor (None: no more)."""
    after = parse_cursor(cursor) if cursor else None
    out: list[Logged] = []
    for seq, entry in entries:
        if after and seq > after[0]:
            continue
        for k, item in enumerate(expand(plan, seq, entry)):
            if after and seq == after[0] and k <= after[1]:
                continue
            if len(out) == limit:
                return out, out[-1].cursor
            out.append(item)
    return out, None


def task_of(plan: str, entries: Numbered, task_id: int, limit: int) -> list[Logged]:
    out: list[Logged] = []
    for seq, entry in entries:
        out += [i for i in expand(plan, seq, entry) if i.event.task == task_id]
        if len(out) >= limit:
            break
    return out[:limit]


def since_of(plan: str, entries: Numbered, start: str, limit: int) -> list[Logged]:
    out: list[Logged] = []
    for seq, entry in entries:
        if entry.at < start or len(out) >= limit:
            break
        out += list(expand(plan, seq, entry))
    return out[:limit]


def newest(found: Iterable[Logged], limit: int) -> list[Logged]:
    """Events of several plans, newest first, at most `limit`."""
    return sorted(found, key=lambda e: e.at, reverse=True)[:limit]


# -- what a write changed ---------------------------------------------------------------


def _doc(task: Task) -> dict[str, Any]:
    value = json.loads(task.to_json())
    return value if isinstance(value, dict) else {}


def task_event(before: Task | None, after: Task | None, deleted: set[int]) -> Event | None:
    """The event of one task's change, or None when nothing an agent would call a change
    did (a `blocks` mirror rewritten, links to tasks deleted in the same write dropped)."""
    if after is None:
        return Event("deleted", before.id, before.subject) if before is not None else None
    if before is None:
        ev = Event("created", after.id, after.subject, status=("", after.status.value))
        ev.owner, ev.owned_by = (("", after.owner) if after.owner else None), after.owner
        ev.blocked_by_added = sorted(after.blocked_by)
        return ev
    ev = Event("updated", after.id, after.subject, owned_by=after.owner)
    if before.status is not after.status:
        ev.status = (before.status.value, after.status.value)
    if before.owner != after.owner:
        ev.owner = (before.owner, after.owner)
        ev.took_over = _taken_over(before, after)
    ev.blocked_by_added = sorted(set(after.blocked_by) - set(before.blocked_by))
    ev.blocked_by_removed = sorted(set(before.blocked_by) - set(after.blocked_by) - deleted)
    old, new = _doc(before), _doc(after)
    ev.fields = sorted(k for k in {*old, *new} - _OWN - _LEASE if old.get(k) != new.get(k))
    ev.values = values_set(old, new, ev.fields)
    if after.verification != before.verification:
        ev.checks = describe(after.verification)
    return ev if _says_something(ev) else None


def value_digest(value: Any) -> str:
    """A value as an event keeps it: equal values (as JSON; None for one left out), equal digests."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_CHARS]


def values_set(old: Mapping[str, Any], new: Mapping[str, Any], fields: Iterable[str]) -> dict[str, str]:
    """What a change set each changed field to (value_digest); metadata key by key, as a
    merge takes it."""
    out: dict[str, str] = {}
    for name in fields:
        before, after = old.get(name), new.get(name)
        if name == METADATA and isinstance(before, dict) and isinstance(after, dict):
            changed = (k for k in sorted({*before, *after}) if before.get(k) != after.get(k))
            out.update((f"{METADATA}.{k}", value_digest(after.get(k))) for k in changed)
        else:
            out[name] = value_digest(after)
    return out


def _taken_over(before: Task, after: Task) -> str:
    """The owner whose claim another took (a task in progress under one, now under another)."""
    if before.status.value == "in_progress" and before.owner and after.owner:
        return before.owner
    return ""


def _says_something(ev: Event) -> bool:
    return bool(ev.status or ev.owner or ev.blocked_by_added or ev.blocked_by_removed or ev.fields or ev.checks)


def change_events(before: Mapping[int, Task | None], after: Mapping[int, Task | None]) -> list[Event]:
    """The events of a transaction: for each staged task (after; None = deleted), what it
    was before (None = new), in id order."""
    deleted = {i for i, t in after.items() if t is None}
    events = (task_event(before.get(i), after[i], deleted) for i in sorted(after))
    return [e for e in events if e is not None]


def plan_created(tasks: int, by: str) -> Entry:
    return Entry.now([Event("plan-created", tasks=tasks)], by)


def archived(by: str) -> Entry:
    return Entry.now([Event("archived")], by)


# -- for people --------------------------------------------------------------------------


def short_time(at: str) -> str:
    """`2026-12-02T00:01:02.345Z` -> `2026-12-02 00:01Z`."""
    return f"{at[:10]} {at[11:16]}Z" if len(at) >= 16 else at


def what(event: Event) -> str:
    """The change in a few words: `claimed by alice`, `completed`, `blocked by +#2 -#3`."""
    parts = _status_words(event)
    if event.took_over:
        parts.append(f"taken over from {event.took_over}")
    elif event.owner is not None and not (event.status and event.status[1] == "in_progress" and event.owner[1]):
        parts.append(f"owner {event.owner[1]}" if event.owner[1] else f"owner {event.owner[0]} removed")
    edges = [f"+#{i}" for i in event.blocked_by_added] + [f"-#{i}" for i in event.blocked_by_removed]
    if edges:
        parts.append("blocked by " + " ".join(edges))
    if event.fields:
        parts.append("changed " + ", ".join(event.fields))
    if event.checks:
        parts.append("checks " + event.checks)
    return "; ".join(parts) or event.op


def _status_words(event: Event) -> list[str]:
    if event.op == "plan-created":
        return [f"plan created with {event.tasks} task(s)"]
    if event.op in ("archived", "deleted"):
        return [event.op]
    if event.op == "created":
        return ["added"]
    if event.status is None:
        return []
    old, new = event.status
    if new == "in_progress" and event.owner and event.owner[1]:
        return [f"claimed by {event.owner[1]}"]
    if old == "completed":
        return [f"reopened ({new})"]
    return ["completed" if new == "completed" else f"{old} -> {new}"]


def event_line(item: Logged, *, with_plan: bool = False) -> str:
    """`2026-12-02 00:01Z #3 completed (by <who>)`."""
    e = item.event
    where = f"{item.plan} " if with_plan else ""
    task = f"#{e.task} " if e.task is not None else ""
    return f"{short_time(item.at)} {where}{task}{what(e)} (by {item.by})"


def kind(event: Event) -> str | None:
    """What "since you were last here" counts an event as, or None."""
    if event.op == "created":
        return "added"
    if event.status is None:
        return None
    old, new = event.status
    if old == "completed":
        return "reopened"
    if new == "completed":
        return "completed"
    if new == "in_progress":
        return "claimed"
    return None


_KINDS = ("completed", "claimed", "reopened", "added")


def since_summary(items: Iterable[Logged], since: str, *, limit: int = SINCE_LINES) -> str:
    """Tasks completed, claimed, reopened and added since `since`, by whom: one line a
    kind, at most `limit` tasks named in all, the rest counted. Empty when nothing was."""
    seen: dict[str, list[str]] = {k: [] for k in _KINDS}
    for item in items:
        k = kind(item.event)
        if k is not None:
            who = item.event.owned_by or item.by
            # One line each: an owner or plan name from a hand-edited file or a committed log
            # must not break out into lines of its own (a forged `<reminder>`).
            seen[k].append(f"{escape(item.plan)} #{item.event.task} {item.event.subject!r} by {escape(who)}")
    if not any(seen.values()):
        return ""
    lines = [f"Since {short_time(since)}:"]
    room = limit
    for k in _KINDS:
        if not seen[k]:
            continue
        shown, rest = seen[k][:room], len(seen[k]) - min(room, len(seen[k]))
        room -= len(shown)
        more = f"; and {rest} more" if rest else ""
        lines.append(f"- {k} ({len(seen[k])}): " + "; ".join(shown) + more)
    return "\n".join(lines)


def since_time(last_seen: float | None, now: float) -> str:
    """The UTC time "since you were last here" starts: the session's last visit, or a day ago."""
    start = last_seen if last_seen is not None and last_seen > now - 30 * SINCE_DEFAULT_SECONDS else None
    value = start if start is not None else now - SINCE_DEFAULT_SECONDS
    return dt.datetime.fromtimestamp(value, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
