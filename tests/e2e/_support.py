"""Kept for the files that still import it (tests/server/_wire.py, tests/conformance/,
tests/e2e/test_http_resume.py, tests/e2e/test_cli.py): the helpers moved to tests/support/procs.py
(and the seed's names to tests/support/seed.py)."""

from tests.support.procs import (
    HOST,
    REPO,
    Served,
    child_env,
    console_script,
    free_port,
    run_cli,
    serving,
    stop,
    wait_for_port,
    wait_until,
)
from tests.support.seed import PLAN_DATE, PLAN_NAME, SEED_ACTIVE_LINE, SEED_SUMMARY, SUBJECTS

__all__ = [
    "HOST",
    "PLAN_DATE",
    "PLAN_NAME",
    "REPO",
    "SEED_ACTIVE_LINE",
    "SEED_SUMMARY",
    "SUBJECTS",
    "Served",
    "child_env",
    "console_script",
    "free_port",
    "run_cli",
    "serving",
    "stop",
    "wait_for_port",
    "wait_until",
]
