"""A recorded session answers byte for byte as it did: every tool, resource and prompt the
server lists (tests.support.record_session.play: plans, tasks with dependencies,
acceptance, labels, gates, claims of "next", notes, refusals, filtered and paged lists,
todo, archiving, a second connection), on every store in both protocol modes, compared
with tests/server/recorded/<store>-<mode>.json after the normaliser (record_session.NORMALISER:
timestamps and the PostgreSQL URL) and nothing else.

A refactor must leave these recordings as they are. When a change of behaviour is intended,
re-record and review the diff:

    PYTHONPATH=. .venv/bin/python -m tests.support.record_session --write
"""

from __future__ import annotations

import difflib
import os
from typing import Any

from tests.support.record_session import RECORD_ENV, play, recording_path


async def test_the_recorded_session_answers_as_recorded(connect: Any, request: Any, mode: str) -> None:
    store = request.node.callspec.params["store"]
    said = (await play(connect)).text()
    path = recording_path(store, mode)
    if os.environ.get(RECORD_ENV) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(said, encoding="utf-8")
        return
    recorded = path.read_text(encoding="utf-8")
    if said != recorded:
        diff = difflib.unified_diff(recorded.splitlines(), said.splitlines(), str(path), "this run", lineterm="", n=2)
        raise AssertionError("the session answers differently:\n" + "\n".join(list(diff)[:200]))
