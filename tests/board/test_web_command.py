"""`planning-mcp web`: the board on its own port, read-only unless --actions; with
--actions a person starts and claims tasks through TaskUpdate and sees each refusal."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from planning_core import Planner
from planning_core.stores.files import FileStore
from tests.support.procs import HOST, child_env, console_script, free_port, run_cli, stop, wait_for_port, wait_until
from tests.support.waits import bound

from .conftest import COLUMNS_JS, SCREENSHOTS_ENV, column_ids, known_plan, screenshot_path


@contextmanager
def web(tmp_path: Path, root: Path | str, *extra: str) -> Iterator[str]:
    """`planning-mcp web` on the folder `root`, or on the store URL `root` names."""
    port = free_port()
    err = tmp_path / f"web-{port}.stderr"
    where = ["--store", root] if isinstance(root, str) else ["--root", str(root)]
    with err.open("wb") as out:
        proc = subprocess.Popen(
            [console_script(), "web", *where, "--port", str(port), *extra],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=out,
            env=child_env(),
        )
    try:
        wait_for_port(proc, port, err)
        # The line is printed once the socket is bound and listening: wait for it too.
        wait_until(lambda: f"http://{HOST}:{port}/board" in err.read_text(), "the board's serving line")
        yield f"http://{HOST}:{port}"
    finally:
        stop(proc)


def post(url: str, body: dict[str, Any], origin: str | None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json", **({"Origin": origin} if origin else {})}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=bound(10)) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        raw = e.read().decode()
        # The Host/Origin check answers in plain text ("Invalid Origin header"), the board in JSON.
        return e.code, json.loads(raw) if raw.startswith("{") else {"refused": True, "message": raw}


async def test_web_with_actions_starts_claims_and_shows_refusals(tmp_path: Path, browser: Any) -> None:
    root = tmp_path / "root"
    name = known_plan(root)
    with web(tmp_path, root, "--actions") as base:
        page = await browser.new_page()
        await page.goto(f"{base}/board")
        await page.wait_for_selector(".card[data-task='4'] button[data-action='start']")
        # A refusal of the core, shown with its message: #5 waits for the in-progress #3.
        await page.click(".card[data-task='5'] button[data-action='start']")
        await page.wait_for_selector("#notice.refused")
        refusal = await page.text_content("#notice") or ""
        assert "#5" in refusal and "#3" in refusal, refusal
        # Claiming needs a name; with one, Start claims and starts.
        await page.click(".card[data-task='4'] button[data-action='claim']")
        assert "name" in (await page.text_content("#notice") or "")
        await page.fill("#owner", "carol")
        await page.click(".card[data-task='4'] button[data-action='start']")
        await page.wait_for_selector(".col[data-col='in_progress'] .card[data-task='4'] .owner")
        assert await page.text_content(".card[data-task='4'] .owner") == "carol"
        assert column_ids(await page.evaluate(COLUMNS_JS))["in_progress"] == [3, 4]
        on_disk = json.loads((root / "todo" / name / "task_4.json").read_text())
        assert on_disk["status"] == "in_progress" and on_disk["owner"] == "carol"
        # Only the page itself may act: another origin, or none, is refused and changes nothing.
        before = (root / "todo" / name / "task_5.json").read_bytes()
        for origin in ("http://evil.example", None):
            status, answer = post(
                f"{base}/board/api/action", {"action": "claim", "plan": name, "taskId": 5, "owner": "x"}, origin
            )
            assert status == 403 and answer["refused"], (origin, answer)
        assert (root / "todo" / name / "task_5.json").read_bytes() == before


def test_web_refuses_to_start_without_a_token_off_loopback_or_without_a_root(tmp_path: Path) -> None:
    done = run_cli(["web", "--host", "0.0.0.0", "--port", "0", "--root", str(tmp_path)])
    assert done.returncode == 2 and "without a token" in done.stderr
    done = run_cli(["web", "--port", "0", "--root", str(tmp_path / "missing")])
    assert done.returncode == 2 and "no planning folder" in done.stderr


def test_a_test_run_saves_its_screenshots_outside_the_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's pictures (docs/screenshots) change only when asked for, by naming the folder."""
    monkeypatch.delenv(SCREENSHOTS_ENV, raising=False)
    assert screenshot_path(tmp_path, "board.png") == tmp_path / "board.png"
    asked = tmp_path / "refreshed"
    monkeypatch.setenv(SCREENSHOTS_ENV, str(asked))
    assert screenshot_path(tmp_path, "board.png") == asked / "board.png"
    assert asked.is_dir()


def test_the_board_opens_on_the_newest_plan_with_work_left(tmp_path: Path) -> None:
    """Asked for no plan, the board shows the newest active plan that has work left, not
    the first (oldest) one, nor a newer one whose tasks are all completed."""
    root = tmp_path / "root"
    store = FileStore(root)
    store.ensure_writable()
    planner = Planner(store)
    made = {}
    for date, done in (("2026-01-05", True), ("2026-02-05", False), ("2026-03-05", True)):
        name = planner.create_plan(f"Plan {date}", date=date, tasks=[{"subject": "one"}, {"subject": "two"}]).name
        if done:
            for task in (1, 2):
                planner.update_task(name, task, status="completed")
        made[date] = name
    with web(tmp_path, root) as base, urllib.request.urlopen(f"{base}/board/api/board", timeout=bound(10)) as r:
        shown = json.loads(r.read())
    assert shown["plan"]["name"] == made["2026-02-05"]
