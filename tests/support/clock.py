"""The planner's clock, moved by the test: an expiry is an instant, not a wait."""

from __future__ import annotations

import datetime as dt

T0 = dt.datetime(2026, 5, 28, 9, 0, 0, tzinfo=dt.UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> dt.datetime:
        return self.now

    def set(self, seconds: float) -> None:
        self.now = T0 + dt.timedelta(seconds=seconds)
