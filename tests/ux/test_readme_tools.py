"""The README's tool table is the user's reference: every tool the server lists has a row,
and every parameter of its input schema is named in that row."""

from __future__ import annotations

import re

from mcp import Client

from planning_core.models import RULES, WIRE
from planning_core.stores.memory import MemoryStore
from server.mcp.app import build_server
from tests.support.budgets import readme_cap
from tests.support.procs import REPO

PLAN_TASKS = re.compile(r"`tasks\?: \[\{(?P<fields>[^}]*)\}\]`")
ROW = re.compile(r"^\| \*\*(?P<tool>[A-Za-z]+)\*\* \| (?P<inputs>[^|]*) \|", re.MULTILINE)


def readme_rows() -> dict[str, str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return {m["tool"]: m["inputs"] for m in ROW.finditer(text)}


def test_every_field_of_plancreates_tasks_is_in_its_readme_row() -> None:
    """The README's row of PlanCreate lists its tasks' fields (`tasks?: [{subject, ...}]`):
    every field whose rule puts it in PlanCreate's tasks (models.FieldRule.in_plan)."""
    tasks = PLAN_TASKS.search(readme_rows()["PlanCreate"])
    assert tasks, "the README's PlanCreate row has no `tasks?: [{...}]`"
    named = set(re.findall(r"[A-Za-z]+", tasks["fields"]))
    missing = [WIRE[n] for n, rule in RULES.items() if rule.in_plan is not None and WIRE[n] not in named]
    assert not missing, f"fields of PlanCreate's tasks missing from the README's PlanCreate row: {missing}"


async def test_every_tool_parameter_is_in_the_readme_tool_table() -> None:
    async with Client(build_server(MemoryStore())) as client:
        listed = (await client.list_tools()).tools
    rows = readme_rows()
    missing = {
        tool.name: sorted(p for p in tool.input_schema.get("properties", {}) if f"`{p}" not in rows.get(tool.name, ""))
        for tool in listed
    }
    unlisted = {t.name for t in listed} - set(rows)
    assert not unlisted, f"tools without a README row: {unlisted}"
    assert not {k: v for k, v in missing.items() if v}, f"parameters missing from the README's tool table: {missing}"


LINK = re.compile(r"\]\(((?:docs/)?[A-Za-z0-9_.-]+\.(?:md|json|example))(?:#[^)]*)?\)")


def test_the_readme_stays_a_page_and_its_links_lead_somewhere() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    # A user's page (with an allowance for each task field): the deeper text belongs in docs/.
    assert len(text.encode()) <= readme_cap(), "README.md grew past a page: move the detail to docs/"
    targets = {m[1] for m in LINK.finditer(text)}
    assert "docs/running.md" in targets
    assert not [t for t in targets if not (REPO / t).is_file()], "README links to files that do not exist"
