"""The install paths outside Claude Code, each checked by its own tool:

- the wheel, with PyPI-ready metadata, runs under `uvx --from <wheel>` and `pipx run`;
- the Claude Desktop bundle, made by the README's command (packaging/build.py bundle, no
  Node): the `.mcpb` the README names, which the MCP Bundle CLI reads (`mcpb info`), unpacks
  and validates, holding what `mcpb pack` would put in it, file by file; its manifest's
  command (server type `uv`) serves the plans folder the user picked, as the host would
  start it from the unpacked bundle."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from mcp import StdioServerParameters

from server import __version__
from tests.support.mcp import connect, text_of
from tests.support.procs import REPO
from tests.support.wheel import build_wheel

from .tools import SLOW, host_env, mcpb, node_bin, project_meta, python_tool, run, tool_dir


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel `pip wheel` builds from a copy of the source tree (offline, no deps)."""
    return build_wheel(tmp_path_factory.mktemp("wheel"), SLOW)


def test_the_wheel_carries_what_pypi_shows(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(info).decode())
    assert meta["License-Expression"] == "MIT"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert meta["Description-Content-Type"] == "text/markdown"
    assert "<!-- mcp-name: io.github.planning-mcp/planning-mcp -->" in meta.get_payload()  # the registry's check
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert set(urls) >= {"Homepage", "Repository", "Documentation", "Issues"}
    classifiers = meta.get_all("Classifier")
    assert "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3.11" in classifiers
    assert {"planning_core/py.typed", "server/py.typed"} <= names


@pytest.mark.parametrize("runner", ["uvx", "pipx"])
def test_the_wheel_runs_under_uvx_and_pipx_run(wheel: Path, tmp_path: Path, runner: str) -> None:
    if runner == "uvx":
        command = [python_tool("uvx"), "--from", wheel, "planning-mcp", "--version"]
    else:
        command = [python_tool("pipx"), "run", "--spec", wheel, "planning-mcp", "--version"]
    env = host_env(tmp_path / "home", [], {"PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "b")})
    r = run(command, env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == f"planning-mcp {__version__}"


def test_pipx_install_of_a_clone_puts_planning_mcp_on_path(tmp_path: Path) -> None:
    """The README's way to have `planning-mcp` on PATH before it is on PyPI (the plugin's
    launcher then runs it): `pipx install ./planning-mcp`, from a clone."""
    clone = tmp_path / "planning-mcp"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)], check=True, timeout=SLOW)
    command = [python_tool("pipx"), "install", "./planning-mcp"]
    bin_dir = tmp_path / "bin"
    env = host_env(tmp_path / "home", [], {"PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(bin_dir)})
    r = run(command, env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    version = run([bin_dir / "planning-mcp", "--version"], env, cwd=tmp_path)
    assert version.stdout.strip() == f"planning-mcp {__version__}", version.stderr


def _readme_bundle_line() -> tuple[str, str]:
    """The README's Claude Desktop line: the file it names and the command that makes it."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"\*\*Claude Desktop\*\*: double-click `([^`]+\.mcpb)`.*?\(`([^`]+)` makes it\)", text, re.S)
    assert found, "README.md's Claude Desktop line names no .mcpb and no command that makes it"
    return found.group(1), found.group(2)


def _bundle(tmp_path: Path) -> Path:
    """The README's command, run as a user runs it in a checkout (a copy of one, without Node
    on PATH): the file the README names, in build/."""
    name, command = _readme_bundle_line()
    src = tmp_path / "checkout"
    src.mkdir()
    for item in ("pyproject.toml", "README.md", "LICENSE", ".claude-plugin", "packaging", "planning_core", "server"):
        path = REPO / item
        skip = shutil.ignore_patterns("__pycache__")
        (shutil.copytree(path, src / item, ignore=skip) if path.is_dir() else shutil.copy(path, src / item))
    args = shlex.split(command)
    assert args[0] == "python", command
    r = run([sys.executable, *args[1:]], host_env(tmp_path / "home", []), cwd=src, timeout=60)
    assert r.returncode == 0, r.stderr
    bundle = src / "build" / name
    assert r.stdout.strip() == str(bundle) and bundle.is_file(), r.stdout
    return bundle


def _members(bundle: Path) -> dict[str, tuple[bytes, int, int]]:
    """Each file of a bundle: its bytes, Unix permissions and compression."""
    with zipfile.ZipFile(bundle) as z:
        return {i.filename: (z.read(i), (i.external_attr >> 16) & 0o777, i.compress_type) for i in z.infolist()}


def test_the_readmes_bundle_is_one_mcpb_reads_unpacks_and_would_pack(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    assert bundle.name == f"{project_meta()['name']}-{__version__}.mcpb"  # the README names this version's
    env = host_env(tmp_path / "home", [node_bin()])
    info = run([mcpb(), "info", bundle], env, cwd=tmp_path)
    assert info.returncode == 0 and f"File: {bundle.name}" in info.stdout, info.stdout + info.stderr
    unpacked = tmp_path / "unpacked"
    opened = run([mcpb(), "unpack", bundle, unpacked], env, cwd=tmp_path)
    assert opened.returncode == 0, opened.stdout + opened.stderr
    checked = run([mcpb(), "validate", unpacked / "manifest.json"], env, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Manifest schema validation passes!" in checked.stdout
    manifest = json.loads((unpacked / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["manifest_version"], manifest["server"]["type"]) == ("0.4", "uv")
    assert manifest["user_config"]["plans_folder"]["type"] == "directory"
    ours = _members(bundle)
    assert {"manifest.json", "pyproject.toml", "icon.png", "server/__main__.py", "planning_core/store.py"} <= set(ours)
    assert not any(n.startswith(("tests/", "bench/", "packaging/")) or "__pycache__" in n for n in ours)
    # What mcpb's own packer makes of the same files: the same members, bytes and permissions.
    packed = run([mcpb(), "pack", unpacked, tmp_path / "repacked.mcpb"], env, cwd=tmp_path)
    assert packed.returncode == 0, packed.stdout + packed.stderr
    assert _members(tmp_path / "repacked.mcpb") == ours


async def test_the_bundles_command_serves_the_folder_the_user_picked(tmp_path: Path) -> None:
    """The manifest's mcp_config with the host's substitutions (${__dirname}: where the
    bundle was unpacked, by mcpb; ${user_config.plans_folder}: the folder picked), run with uv."""
    folder = tmp_path / "unpacked"
    opened = run([mcpb(), "unpack", _bundle(tmp_path), folder], host_env(tmp_path / "home", [node_bin()]), tmp_path)
    assert opened.returncode == 0, opened.stdout + opened.stderr
    plans = tmp_path / "picked" / "plans"
    plans.mkdir(parents=True)  # a folder picker gives a folder that exists
    config = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["server"]["mcp_config"]
    args = [
        a.replace("${__dirname}", str(folder)).replace("${user_config.plans_folder}", str(plans))
        for a in config["args"]
    ]
    assert config["command"] == "uv"
    env = host_env(tmp_path / "home", [tool_dir(tmp_path, python_tool("uv"))])
    # The first run fetches the dependencies: done here, outside the client's wait.
    warm = run(["uv", "sync", "--quiet", "--directory", folder], env, cwd=tmp_path)
    assert warm.returncode == 0, warm.stderr
    params = StdioServerParameters(command="uv", args=args, env=env, cwd=str(tmp_path))
    async with connect(params, tmp_path / "err.log") as client:
        made = await client.call_tool("PlanCreate", {"title": "From the desktop", "analysis": "a", "approach": "b"})
        assert not made.is_error, text_of(made)
    (made_plan,) = (plans / "todo").iterdir()
    assert made_plan.name.endswith("from-the-desktop")
