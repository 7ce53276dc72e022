"""Entry points, packaging, and one-line errors a person can act on."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from server.cli import main
from tests.support.waits import bound

from .conftest import PLAN_NAME

REPO = Path(__file__).resolve().parents[2]


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line, got:\n{err}"
    return lines[0]


def test_python_dash_m_server(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "server", "--version"], capture_output=True, text=True, timeout=bound(30))
    assert (r.returncode, r.stdout.strip()) == (0, "planning-mcp 0.1.0")
    r = subprocess.run([sys.executable, "-m", "server", "--help"], capture_output=True, text=True, timeout=bound(30))
    for command in ("serve", "status", "board", "graph", "watch", "hook"):
        assert command in r.stdout


def test_bad_root_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    assert main(["status", "--root", str(not_a_dir)]) == 2
    assert main(["--root", str(not_a_dir / "sub")]) == 2  # serve stdio
    status, serve = capsys.readouterr().err.splitlines()
    assert status.startswith(f"planning-mcp: no planning folder at {not_a_dir}; ") and "--root DIR" in status
    assert "set --root DIR or PLANNING_MCP_ROOT" in serve


def test_port_in_use_is_one_line(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--transport", "http", "--port", str(port), "--root", str(root)]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"127.0.0.1:{port}" in line and "pick another --port" in line


def test_missing_token_off_loopback_is_one_line(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PLANNING_MCP_TOKEN", raising=False)
    assert main(["serve", "--transport", "sse", "--host", "0.0.0.0", "--port", "1", "--root", str(root)]) == 2
    assert "--token" in one_line(capsys.readouterr().err)


def test_corrupt_task_file_is_reported_with_what_to_do(
    root: Path, seeded: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = root / "todo" / PLAN_NAME / "task_2.json"
    bad.write_text("{torn")
    assert main(["board", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "#2 [unreadable] task_2.json" in out
    assert f"! {bad} cannot be read: fix it or move it out of the folder by hand" in out
    assert main(["status", "--root", str(root)]) == 0
    assert "[!] #2: task_2.json is unreadable" in capsys.readouterr().out
    assert bad.read_text() == "{torn"


def _setuptools_version() -> tuple[int, ...]:
    try:
        import setuptools
    except ImportError:
        return (0,)
    return tuple(int(p) for p in setuptools.__version__.split(".")[:2] if p.isdigit())


@pytest.mark.skipif(
    _setuptools_version() < (77,),
    reason="building offline (--no-build-isolation) needs setuptools>=77 in this venv (PEP 639 license string); "
    'the test extra installs it: pip install -e ".[test]"',
)
def test_wheel_builds_with_every_module(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for item in ("pyproject.toml", "README.md", "LICENSE", "planning_core", "server"):
        path = REPO / item
        (shutil.copytree if path.is_dir() else shutil.copy)(path, src / item)
    started = time.monotonic()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=bound(60),
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert time.monotonic() - started < bound(30)
    wheel = next(tmp_path.glob("planning_mcp-*.whl"))
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    # Every module of the source tree, subpackages included (a package left out of
    # pyproject's list installs fine in editable mode and breaks every installed command).
    modules = {str(p.relative_to(REPO)) for pkg in ("planning_core", "server") for p in (REPO / pkg).rglob("*.py")}
    assert modules - names == set()
    assert "planning_core/stores/postgres/store.py" in names
