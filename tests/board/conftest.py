"""The board's tests drive Debian's Chromium (/usr/bin/chromium) through Playwright; no
browser is downloaded. Each test gets a fresh profile and a real server child."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from planning_core import Planner
from planning_core.stores.files import FileStore
from tests.support.seed import FORK, seed_root
from tests.support.waits import bound

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-gpu",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS_ENV = "PLANNING_MCP_SCREENSHOTS"  # e.g. docs/screenshots, to refresh the README's pictures
VIEWPORT = {"width": 1280, "height": 720}
expect.set_options(timeout=bound(5) * 1000)  # Playwright's own default for expect(), in ms, scaled


@pytest.fixture
async def browser(tmp_path: Path) -> AsyncIterator[Any]:
    """A Chromium context with a new profile (its own --user-data-dir)."""
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.fail("Chromium is missing: apt-get install chromium (.ci/run does)")
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        context = await pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport=VIEWPORT,  # type: ignore[arg-type]
        )
        context.set_default_timeout(bound(30) * 1000)  # Playwright's own default, in ms, scaled
        try:
            yield context
        finally:
            await context.close()


def screenshot_path(tmp_path: Path, name: str) -> Path:
    """Where a test saves a screenshot: the folder $PLANNING_MCP_SCREENSHOTS names (created),
    else the test's temporary folder, so that running the tests never changes a tracked file."""
    chosen = os.environ.get(SCREENSHOTS_ENV)
    folder = Path(chosen).absolute() if chosen else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def known_plan(root: Path) -> str:
    """The seed (FORK: #1, #2 done, #3 in progress under alice, #4 ready) plus #5, blocked by
    the in-progress #3: every column holds something. Returns the plan's name."""
    name = seed_root(root, FORK)
    planner = Planner(FileStore(root))
    planner.create_task(
        name, "Write the auth docs", "Once login works: how to log in, with curl examples.", blocked_by=[3]
    )
    return name


def column_ids(cards: list[dict[str, Any]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for c in cards:
        out.setdefault(c["col"], []).append(c["task"])
    return out


COLUMNS_JS = """() => [...document.querySelectorAll('.col')].flatMap(col =>
  [...col.querySelectorAll('.card')].map(card => ({col: col.dataset.col, task: Number(card.dataset.task),
   unreadable: card.classList.contains('unreadable')})))"""
