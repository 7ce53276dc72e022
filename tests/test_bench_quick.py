"""The benchmark harness runs end to end in quick mode (a smoke test, not a measurement).

It writes to a temp file (--out), so CI never rewrites BENCHMARKS.md."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_bench_quick_completes_and_prints_the_table(tmp_path: Path) -> None:
    out = tmp_path / "BENCHMARKS.md"
    env = {k: v for k, v in os.environ.items() if k != "PLANNING_MCP_ROOT"}
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--quick", "--out", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for heading in ("## Targets", "## Per-operation latency", "## Growth", "## Shared writers", "## Machine"):
        assert heading in proc.stdout, heading
    for op in ("| TaskCreate ", "| TaskUpdate status ", "| TaskGet ", "| TaskList ", "| todo ", "| PlanList "):
        assert op in proc.stdout, op
    assert "echo (floor" in proc.stdout
    # The file written is exactly the tables printed (print adds the final newline), and
    # the run says where it wrote them.
    assert proc.stdout == out.read_text() + "\n"
    assert f"[bench] wrote {out}" in proc.stderr
    # every writer's acknowledged task is on disk
    writers = proc.stdout.split("## Shared writers")[1]
    assert "| NO " not in writers
