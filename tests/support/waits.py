"""How long a test waits for something that must happen, at the latest.

A wait in a test is a bound on "never hangs", not a figure the test measures: a server's
start, an answer, a child's exit. On a busy machine (many processes sharing two cores)
everything takes longer by about the same factor, so every such wait is written as
`bound(seconds)`: the seconds it needs on an idle machine, times one factor for the whole
suite, $PLANNING_MCP_TEST_WAIT_SCALE. Unset, the factor is 3 on a machine up to a load of 4
per core and grows with the load above that (a load of 16 on two cores doubles it), read when
a bound is asked for (a module's constant: as the module loads), so the README's plain test
command passes beside a CPU hog with no knob; it stops at 20, so a real hang still fails.
A promise the product makes in seconds ("within a second", a lease's length, a quiet period)
is not a bound and stays as it is.
"""

from __future__ import annotations

import os

SCALE_ENV = "PLANNING_MCP_TEST_WAIT_SCALE"
DEFAULT_SCALE = 3.0
# Per core, the load up to which the default holds, and the most the load may stretch it to.
QUIET_LOAD_PER_CORE = 4.0
MAX_LOAD_SCALE = 20.0


def load_scale() -> float:
    """The default factor for the machine's business now: 3, stretched by the load per core
    above QUIET_LOAD_PER_CORE (the one-minute load average), at most MAX_LOAD_SCALE."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return DEFAULT_SCALE
    per_core = load / (os.cpu_count() or 1)
    return min(MAX_LOAD_SCALE, DEFAULT_SCALE * max(1.0, per_core / QUIET_LOAD_PER_CORE))


def scale() -> float:
    """The suite's factor: $PLANNING_MCP_TEST_WAIT_SCALE (a positive number), else the load's."""
    raw = os.environ.get(SCALE_ENV, "").strip()
    if not raw:
        return load_scale()
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
