"""Every field the board's card shows (its rule's `board`: models.FieldRule) is in the board's
row and changes its card, in Chromium: a field declared for the board and not read by
server/board/assets/board.js (its one line there) fails here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planning_core import Planner
from planning_core.models import RULES, WIRE, Task, TaskStatus
from planning_core.rendering.rows import board_row
from planning_core.stores.files import FileStore
from tests.core.test_task_fields import CHANGED
from tests.support.procs import serving

BOARD_FIELDS = [name for name, rule in RULES.items() if rule.board]
# Each card's text but its id line: what the card shows of the task's fields.
CARD_TEXTS_JS = """() => Object.fromEntries([...document.querySelectorAll('.card')].map(card =>
  [card.dataset.task, [...card.children].slice(1).map(part => part.textContent).join('|')]))"""


def test_the_boards_row_carries_every_field_its_card_shows() -> None:
    row = board_row(Task(id=1, subject="s"), [])
    assert {WIRE[name] for name in BOARD_FIELDS} <= set(row)


async def test_every_field_the_card_shows_changes_the_card(tmp_path: Path, browser: Any) -> None:
    """One task with none of the fields set, then one task for each field with only it set
    (in progress: a card shows its active form only then), each with CHANGED's value."""
    root = tmp_path / "root"
    store = FileStore(root)
    name = Planner(store).create_plan("Fields", analysis="a", approach="b").name
    shown = {"1": None} | {str(i): field for i, field in enumerate(BOARD_FIELDS, start=2)}
    with store.transaction(name) as txn:
        for task_id, field in shown.items():
            values = {field: CHANGED[field]} if field else {}
            txn.put(Task(id=int(task_id), subject="Same", status=TaskStatus.IN_PROGRESS, **values))
    with serving(tmp_path, "http", root=root) as srv:
        page = await browser.new_page()
        await page.goto(f"{srv.base}/board")
        await page.wait_for_selector(f".card[data-task='{len(shown)}']")
        texts = await page.evaluate(CARD_TEXTS_JS)
    unshown = [field for task_id, field in shown.items() if field and texts[task_id] == texts["1"]]
    assert not unshown, f"the board's card does not show {unshown} (server/board/assets/board.js)"
