"""Every server module and command reaches the core through one face: planning_core/actions.py's
`Actions` (built over a store with `Actions.over`). No module of `server/` imports the
Planner, calls a store's methods that read or write plans, or hands a store to another
function of the core: a read that two views need is one Actions method, so they cannot
drift apart. What a server keeps of a store is the store's life (opened by the seam's
`open_store`, prepared, closed), the following of its changes and its sessions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "server"
SEAM = REPO / "planning_core" / "store.py"
PLANNER = "planning_core.planner"
# A store's methods a server module calls itself: its description (logged and shown), its life,
# the following of its changes (server/common/changes.py, server/mcp/notify.py) and the sessions
# it keeps for servers sharing it (server/mcp/state.py, the Claude Code hook's state).
THE_SERVERS_OWN = {"describe", "prepare", "close", "root_mistake", "plan_versions", "changes", "edit_session"}
# The core functions a store may be handed to: the actions over it, and the seam's opening.
OPENINGS = {"Actions.over", "open_store"}


def _seam_methods() -> set[str]:
    """Every method of the seam's store protocols (a transaction's are reached only by a store)."""
    tree = ast.parse(SEAM.read_text())
    return {
        item.name
        for node in tree.body
        if isinstance(node, ast.ClassDef) and node.name != "PlanTransaction"
        for item in node.body
        if isinstance(item, ast.FunctionDef)
    }


def _is_store(node: ast.expr) -> bool:
    """An expression naming a store: `store`, `self.store`, `state.store`, `stores[0]`..."""
    if isinstance(node, ast.Subscript):
        return _is_store(node.value)
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "store" in name.lower()


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _core_names(tree: ast.AST) -> set[str]:
    """The names a module binds by importing from planning_core."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "planning_core"
        for alias in node.names
    }


def breaches(source: str, core_methods: set[str]) -> list[str]:
    """Each way `source` (a server module) reaches the core other than through Actions."""
    tree = ast.parse(source)
    found = []
    core = _core_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (
            node.module == PLANNER or any(a.name in ("Planner", "planner") for a in node.names)
        ):
            found.append(f"line {node.lineno}: imports the Planner (use planning_core.actions.Actions)")
        elif isinstance(node, ast.Import) and any(a.name == PLANNER for a in node.names):
            found.append(f"line {node.lineno}: imports {PLANNER} (use planning_core.actions.Actions)")
        elif isinstance(node, ast.Call):
            callee, func = _dotted(node.func), node.func
            if isinstance(func, ast.Attribute) and func.attr in core_methods and _is_store(func.value):
                found.append(f"line {node.lineno}: calls the store's {func.attr} (add a read to Actions)")
            handed = [a for a in [*node.args, *(k.value for k in node.keywords)] if _is_store(a)]
            if handed and callee.split(".")[0] in core and callee not in OPENINGS:
                found.append(f"line {node.lineno}: hands a store to {callee} (go through Actions)")
    return found


def test_the_servers_own_methods_are_the_seams() -> None:
    """The allowance names methods the seam has: a method renamed there is not let through here."""
    assert not THE_SERVERS_OWN - _seam_methods()


@pytest.mark.parametrize("path", sorted(SERVER.rglob("*.py")), ids=lambda p: str(p.relative_to(SERVER)))
def test_server_modules_reach_the_core_through_actions(path: Path) -> None:
    found = breaches(path.read_text(), _seam_methods() - THE_SERVERS_OWN)
    assert not found, f"{path.relative_to(REPO)} reaches the core another way:\n" + "\n".join(found)


def test_the_check_sees_each_other_way() -> None:
    """The check itself: a Planner, a store's read, a store handed to the core are seen; reads
    through Actions, a store's life and the opening functions are not."""
    source = """
from planning_core import Planner
from planning_core.actions import Actions
from planning_core.import_export.copying import copy_plans
from planning_core.rendering import timeline
from planning_core.stores import open_store

store = open_store("memory:")
actions = Actions.over(store)
names = actions.active_plans()
snap = state.store.snapshot(names[0])
lines = timeline.since_text(store, None)
found = copy_plans(stores[0], stores[1])
store.prepare()
store.close()
"""
    assert breaches(source, _seam_methods() - THE_SERVERS_OWN) == [
        "line 2: imports the Planner (use planning_core.actions.Actions)",
        "line 11: calls the store's snapshot (add a read to Actions)",
        "line 12: hands a store to timeline.since_text (go through Actions)",
        "line 13: hands a store to copy_plans (go through Actions)",
    ]
