"""A person approves a gated task on the web board (`planning-mcp web --actions`, behind its
token), on files and on PostgreSQL: the card says what it waits for and offers Approve only,
the approval completes it, and the task waiting for it becomes ready on the open page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from planning_core import Planner
from planning_core.stores import open_store
from tests.support.store_urls import SERVED_KINDS, store_url

from .conftest import COLUMNS_JS, column_ids
from .test_web_command import web

TOKEN = "approve-s3cret"


@pytest.mark.parametrize("kind", SERVED_KINDS)
async def test_a_person_approves_a_gated_task_on_the_board_and_its_dependent_is_ready(
    tmp_path: Path, browser: Any, kind: str
) -> None:
    url = store_url(kind, tmp_path)
    store = open_store(url)
    store.prepare()
    tasks = [{"subject": "Approve the schema", "gate": "human"}, {"subject": "Migrate", "blockedBy": [1]}]
    try:
        name = Planner(store).create_plan("Schema", analysis="a", approach="b", tasks=tasks).name
    finally:
        store.close()
    with web(tmp_path, url, "--actions", "--token", TOKEN) as base:
        page = await browser.new_page()
        await page.goto(f"{base}/board?token={TOKEN}")
        card = page.locator(".card[data-task='1']")
        await expect(card.locator("button[data-action='approve']")).to_be_visible()
        assert await card.locator(".gate").text_content() == "gate: a person"
        assert await card.locator("button").all_text_contents() == ["Approve"]  # no Start, no Complete
        await card.locator("button[data-action='approve']").click()
        await expect(page.locator("#notice.ok")).to_contain_text("Now unblocked: #2 Migrate")
        await expect(page.locator(".col[data-col='ready'] .card[data-task='2']")).to_be_visible()
        assert column_ids(await page.evaluate(COLUMNS_JS)) == {"ready": [2], "done": [1]}
    store = open_store(url)
    try:
        assert store.get_task(name, 1).status.value == "completed"
    finally:
        store.close()
