"""Plan mode in a project planning-mcp has never written to, with the plugin installed
from this checkout: the approved plan becomes a Session Plan, the planning folder made
where the server would make it (the main working tree's .planning)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planning_core.stores.files import FileStore
from tests.support.claude_model import ClaudeHome, interactive, request_text, scripted_model

from .plugin import RELEASES, approve_plan, fresh_project, install_plugin, release_bin
from .test_plan_mode import PLAN, planner_model


@pytest.mark.parametrize("release", RELEASES)
def test_plan_mode_in_a_fresh_project_makes_the_session_plan(tmp_path: Path, release: str) -> None:
    binary = release_bin(release)
    project = fresh_project(tmp_path / "shop")
    home = ClaudeHome(tmp_path / "claude", project)
    home.prepare()
    with scripted_model(planner_model) as model:
        install_plugin(binary, home, model)
        with interactive(binary, home, model, tmp_path, ("--permission-mode", "plan")) as ui:
            ui.keys("-l", "Plan rate limiting for the API")
            ui.wait_for("Plan rate limiting for the API")
            ui.keys("Enter")
            approve_plan(ui)
            ui.wait_for("Plan approved; starting.", timeout=90)
    assert model.errors == []
    store = FileStore(project / ".planning")
    (name,) = store.active_plans()
    assert store.read_plan_md(name) == PLAN
    assert [t.subject for t in store.snapshot(name).tasks.values()] == [
        "Add a limiter module",
        "Wire it into login",
        "Write tests",
    ]
    assert f"Created plan {name} from the approved plan" in request_text(model.requests[-1])
