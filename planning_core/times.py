"""Times as the plans store them: read from text, written in whole seconds of UTC.

A file may hold any time an ISO reader takes, also one that is no time in UTC
(`9999-12-31T23:59:59-14:00` is in the year 10000 there): such a time is read as the
last (or first) moment UTC can hold, never an error, so a lease or a gate that ends
"never" stays readable and comparable."""

from __future__ import annotations

import datetime as dt

LAST = dt.datetime.max.replace(microsecond=0, tzinfo=dt.UTC)
FIRST = dt.datetime.min.replace(tzinfo=dt.UTC)


def parse_utc(text: str) -> dt.datetime | None:
    """The time `text` names, in UTC (no zone: UTC), held within FIRST..LAST; None when
    it is no time."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.UTC)
    try:
        return moment.astimezone(dt.UTC)
    except OverflowError:
        return LAST if moment.year > 1 else FIRST


def stamp(moment: dt.datetime) -> str:
    """A stored time, as createdAt: `2026-05-28T09:00:00Z` (whole seconds, UTC)."""
    try:
        utc = moment.astimezone(dt.UTC)
    except OverflowError:
        utc = LAST if moment.year > 1 else FIRST
    return utc.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"  # strftime drops a year's zeros
