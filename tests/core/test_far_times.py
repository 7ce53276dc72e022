"""Times past what UTC can hold (`9999-12-31T23:59:59-14:00` is in the year 10000 there):
a gate given one is kept as UTC's last moment, and a lease end or a gate a file holds is
read as that moment. Nothing answers "Error executing tool"."""

from __future__ import annotations

import json
from pathlib import Path

from mcp import Client

from planning_core import Planner
from planning_core.store import PlanStore
from server.mcp.app import build_server
from tests.support.mcp import text_of
from tests.support.seed import chain, make_plan

FAR = "9999-12-31T23:59:59-14:00"
LAST = "9999-12-31T23:59:59Z"


def test_a_gate_past_the_last_time_is_kept_as_the_last(planner: Planner, store: PlanStore) -> None:
    tasks = [{"subject": "wait", "gate": {"after": FAR}}, {"subject": "then", "blockedBy": [1]}]
    name = planner.create_plan("Far", analysis="a", approach="b", tasks=tasks).name
    assert store.get_task(name, 1).gate == {"after": LAST}
    planner.update_task(name, 2, gate={"after": "0001-01-01T00:00:00+14:00"})  # before the first: passed
    assert store.get_task(name, 2).gate == {"after": "0001-01-01T00:00:00Z"}


async def test_a_lease_and_a_gate_past_the_last_time_in_files_are_read(tmp_path: Path) -> None:
    root = tmp_path / "root"
    folder = make_plan(root, "far", chain(3))
    for task_id, fields in ((1, {"status": "in_progress", "owner": "bob", "leaseSeconds": 60}), (3, {})):
        path = folder / f"task_{task_id}.json"
        doc = {**json.loads(path.read_text()), **fields}
        if task_id == 1:
            doc["leaseExpiresAt"] = FAR
        else:
            doc["gate"] = {"after": FAR}
        path.write_text(json.dumps(doc))
    async with Client(build_server(root)) as c:
        plan = {"plan": folder.name}
        claimed = await c.call_tool("TaskUpdate", {"taskId": "next", "status": "in_progress", "owner": "al", **plan})
        assert claimed.is_error and text_of(claimed).startswith("No task to claim"), text_of(claimed)
        assert f"lease runs out at {LAST}" in text_of(claimed)
        listed = await c.call_tool("TaskList", plan)
        assert not listed.is_error and f"[gate: after {LAST}]" in text_of(listed), text_of(listed)
        got = await c.call_tool("TaskGet", {"taskId": 1, **plan})
        assert not got.is_error, text_of(got)
