"""How long a test waits for something that must happen, at the latest.

A wait in a test is a bound on "never hangs", not a figure the test measures: a server's
start, an answer, a child's exit. On a busy machine (many processes sharing two cores)
everything takes longer by about the same factor, so every such wait is written as
`bound(seconds)`: the seconds it needs on an idle machine, times one factor for the whole
suite, $PLANNING_MCP_TEST_WAIT_SCALE (default 3). A promise the product makes in seconds
("within a second", a lease's length, a quiet period) is not a bound and stays as it is.
"""

from __future__ import annotations

import os

SCALE_ENV = "PLANNING_MCP_TEST_WAIT_SCALE"
DEFAULT_SCALE = 3.0


def scale() -> float:
    """The suite's factor: $PLANNING_MCP_TEST_WAIT_SCALE (a positive number), else 3."""
    raw = os.environ.get(SCALE_ENV, "").strip()
    if not raw:
        return DEFAULT_SCALE
    try:
        factor = float(raw)
    except ValueError:
        raise ValueError(f"{SCALE_ENV}={raw!r} is not a number (e.g. {SCALE_ENV}=5 on a very busy machine)") from None
    if not factor > 0:
        raise ValueError(f"{SCALE_ENV}={raw!r} must be a positive number")
    return factor


def bound(seconds: float) -> float:
    """The longest a test waits for what takes at most `seconds` on an idle machine."""
    return seconds * scale()
