"""No import circles among the modules of planning_core, server and bench: each module can
be read (and imported) after the ones it names, so a change to one never needs the other
end of a loop to be understood first. Every import counts, a function's own and one made
only for type checking too: a loop there is the same tangle, hidden. And server's folders
are layers: no import runs up a layer or across to one beside it."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("planning_core", "server", "bench")

# server's layers from the bottom up. A module imports from its own folder and from the layers
# below it, never from one above or beside it: the package (server/__init__.py: the version) is
# below all of them, the modules at server's top (`server.*`: the command line's entry, cli,
# entry and __main__) above all of them.
SERVER_LAYERS = (
    ("server",),
    ("server.common",),
    ("server.board", "server.claude_code"),
    ("server.mcp",),
    ("server.transport",),
    ("server.commands",),
    ("server.*",),
)


def _modules() -> dict[str, Path]:
    """Dotted name -> file, a package by its __init__.py."""
    found = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project's modules that module `name` imports: `from X import y` is X.y when that
    is a module, else X; relative imports resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                out.add(sub if sub in modules else module)
        elif isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
    return {m for m in out if m in modules and m != name}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_no_import_circles() -> None:
    modules = _modules()
    graph = {name: _imported(name, path, modules) for name, path in modules.items()}
    circles = _circles(graph)
    said = ["; ".join(f"{m} imports {sorted(graph[m] & set(c))}" for m in c) for c in circles]
    assert not circles, "import circles:\n" + "\n".join(said)


def _place(name: str, modules: dict[str, Path]) -> str:
    """The layer's name a server module belongs to: its folder's, or `server.*` at server's top."""
    if modules[name].name == "__init__.py":
        return name
    folder = name.rpartition(".")[0]
    return "server.*" if folder == "server" else folder


def _breaches(graph: dict[str, set[str]], place: dict[str, str]) -> list[str]:
    """Each import from a server module up a layer or across to one beside it."""
    rank = {p: i for i, layer in enumerate(SERVER_LAYERS) for p in layer}
    return [
        f"{m} imports {d}"
        for m in sorted(place)
        for d in sorted(graph[m])
        if d in place and place[d] != place[m] and rank[place[d]] >= rank[place[m]]
    ]


def test_server_imports_run_down_the_layers() -> None:
    modules = _modules()
    server = {name: path for name, path in modules.items() if name.split(".")[0] == "server"}
    place = {name: _place(name, modules) for name in server}
    unplaced = sorted({p for p in place.values() if p not in {p for layer in SERVER_LAYERS for p in layer}})
    assert not unplaced, f"server modules in no layer (add them to SERVER_LAYERS): {unplaced}"
    graph = {name: _imported(name, path, modules) for name, path in server.items()}
    breaches = _breaches(graph, place)
    assert not breaches, "imports up or across server's layers:\n" + "\n".join(breaches)


def test_the_check_sees_an_import_up_or_across() -> None:
    """The layer check itself: down and within a folder pass, up and beside do not."""
    place = {
        "server.mcp.app": "server.mcp",
        "server.mcp.tools": "server.mcp",
        "server.common.changes": "server.common",
        "server.board.data": "server.board",
        "server.claude_code.claude_hook": "server.claude_code",
    }
    graph = {
        "server.mcp.app": {"server.mcp.tools", "server.common.changes", "server.board.data"},
        "server.mcp.tools": set(),
        "server.common.changes": {"server.mcp.app"},
        "server.board.data": {"server.claude_code.claude_hook"},
        "server.claude_code.claude_hook": set(),
    }
    assert _breaches(graph, place) == [
        "server.board.data imports server.claude_code.claude_hook",
        "server.common.changes imports server.mcp.app",
    ]


def test_the_check_sees_a_circle() -> None:
    """The finder itself: a loop of three and a pair are found, a chain is not."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d"}, "f": {"a"}, "g": set()}
    assert sorted(_circles(graph)) == [["a", "b", "c"], ["d", "e"]]
