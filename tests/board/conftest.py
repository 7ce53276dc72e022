"""The board's tests drive Debian's Chromium (/usr/bin/chromium) through Playwright; no
browser is downloaded. Each test gets a fresh profile and a real server child."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from planning_core import FileStore, Planner
from tests.support.seed import FORK, seed_root

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
REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "docs" / "screenshots"
VIEWPORT = {"width": 1280, "height": 720}


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
        try:
            yield context
        finally:
            await context.close()


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
