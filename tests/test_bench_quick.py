"""The benchmark harness runs end to end in quick mode (a smoke test, not a measurement).

It writes to a temp file (--out), so CI never rewrites BENCHMARKS.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.servers import connect, echo_params
from tests.support.waits import bound

REPO = Path(__file__).resolve().parents[1]


def run_bench(args: list[str], seconds: float) -> subprocess.CompletedProcess[str]:
    """`python -m <args>` from the checkout, with no plans folder set, which must succeed."""
    env = {k: v for k, v in os.environ.items() if k != "PLANNING_MCP_ROOT"}
    proc = subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=bound(seconds)
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def test_bench_quick_completes_and_prints_the_table(tmp_path: Path) -> None:
    out = tmp_path / "BENCHMARKS.md"
    proc = run_bench(["bench.run", "--quick", "--out", str(out)], 110)
    for heading in ("## Targets", "## Per-operation latency", "## Growth", "## Shared writers", "## Machine"):
        assert heading in proc.stdout, heading
    for op in ("| TaskCreate ", "| TaskUpdate status ", "| TaskGet ", "| TaskList ", "| todo ", "| PlanList "):
        assert op in proc.stdout, op
    assert "echo (floor" in proc.stdout
    # A write's floor, through the SDK, beside each write (file store; no PostgreSQL figure).
    for files in ("1 file", "2 files"):
        assert f"| SDK + durable write, {files} (floor server) " in proc.stdout, files
    assert "floor: an SDK server doing only the durable write (1 file)" in proc.stdout
    # A page's floor: the floor server giving back our very answer, beside the page growth.
    assert "| SDK answering the same default page (floor server) " in proc.stdout
    assert "floor: an SDK server giving back the same two answers grows " in proc.stdout
    # The file written is exactly the tables printed (print adds the final newline), and
    # the run says where it wrote them.
    assert proc.stdout == out.read_text() + "\n"
    assert f"[bench] wrote {out}" in proc.stderr
    # every writer's acknowledged task is on disk
    writers = proc.stdout.split("## Shared writers")[1]
    assert "| NO " not in writers


async def test_the_floor_servers_write_replaces_the_files_durably_and_echo_is_unchanged(tmp_path: Path) -> None:
    """The write floor does a write's disk work (a task file, then .highwatermark, renamed into
    place with no temp file left), and the echo floor every ratio divides by is as it was."""
    folder = tmp_path / "plan"
    folder.mkdir()
    (folder / "task_1.json").write_text("old")
    with open(tmp_path / "stderr.log", "w") as log:
        async with connect(echo_params("test"), log) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert sorted(tools) == ["durable_write", "echo", "replay"]
            assert list(tools["echo"].input_schema["properties"]) == ["text"]
            echoed = await c.call_tool("echo", {"text": "hello"})
            assert echoed.structured_content == {"result": "hello"}
            one = await c.call_tool("durable_write", {"folder": str(folder), "files": 1})
            assert not one.is_error
            assert sorted(os.listdir(folder)) == ["task_1.json"]
            assert 300 < (folder / "task_1.json").stat().st_size < 400  # a task file's size
            two = await c.call_tool("durable_write", {"folder": str(folder), "files": 2})
            assert not two.is_error
            assert sorted(os.listdir(folder)) == [".highwatermark", "task_1.json"]
            # The answer floor gives back exactly the answer saved (text and structured content).
            saved = tmp_path / "page.json"
            saved.write_text(json.dumps({"text": "#1 [pending] a", "structured": {"tasks": [{"id": 1}]}}))
            for _ in range(2):  # read once, then given from memory: the same answer
                replayed = await c.call_tool("replay", {"path": str(saved)})
                assert not replayed.is_error
                assert replayed.content[0].text == "#1 [pending] a"  # type: ignore[union-attr]
                assert replayed.structured_content == {"tasks": [{"id": 1}]}


def test_the_stop_hook_bench_runs_each_case_and_prints_its_section() -> None:
    proc = run_bench(["bench.stop_hook", "--runs", "1", "--tasks", "3"], 60)
    assert proc.stdout.startswith("## Claude Code's Stop hook: what one stop costs")
    for case in ("| blocked ", "| let through ", "| no planning folder ", "| python -c pass "):
        assert case in proc.stdout, case
