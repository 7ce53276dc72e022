"""Smoke-probe the peer MCP task servers with the common workload.

    /work/main/.venv/bin/python bench/peers/probe.py [peer ...] [--tasks N] [--keep]

For each installed peer: start it over stdio in a fresh temp dir, print the
tools/list answer size, create N tasks, set one status, list, print sizes and timings.
Server stderr goes to <workdir>/stderr.log.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import PEERS, answer_size, tools_list_size


# task-master-ai prints one non-JSON line on stdout at startup; the SDK skips it but
# logs a full traceback. Keep the one-line message, drop the traceback.
def _no_traceback(record: logging.LogRecord) -> bool:
    record.exc_info, record.exc_text = None, None
    return True


logging.getLogger("mcp.client.stdio").addFilter(_no_traceback)


async def probe(name: str, n_tasks: int, keep: bool) -> bool:
    cls = PEERS[name]
    if not cls.available():
        print(f"[{name}] not installed (run bench/peers/install.sh)")
        return False
    workdir = Path(tempfile.mkdtemp(prefix=f"peer-{name}-"))
    peer = cls(workdir)
    peer.prepare()
    print(f"[{name}] version {cls.installed_version()}  workdir {workdir}")
    try:
        with open(workdir / "stderr.log", "w") as errlog:
            t0 = time.perf_counter()
            async with peer.client(errlog=errlog) as c:
                t_conn = time.perf_counter() - t0
                tools = (await c.list_tools()).tools
                print(f"  startup+initialize   {t_conn * 1000:8.0f} ms  protocol {c.protocol_version}")
                print(f"  tools/list           {len(tools)} tools, {tools_list_size(tools)} chars")

                ids, create_chars = [], 0
                t = time.perf_counter()
                for i in range(n_tasks):
                    r = await peer.create_task(c, i)
                    ids += peer.task_ids(r)
                    create_chars += answer_size(r)
                dt = (time.perf_counter() - t) * 1000
                print(f"  create x{n_tasks}            {dt:8.1f} ms  answers {create_chars} chars total; ids {ids}")
                assert len(ids) == n_tasks, ids

                t = time.perf_counter()
                r = await peer.set_status(c, ids[0], "in_progress")
                ms = (time.perf_counter() - t) * 1000
                print(f"  set_status in_progress {ms:6.1f} ms  answer {answer_size(r)} chars")
                t = time.perf_counter()
                r = await peer.set_status(c, ids[1], "done")
                ms = (time.perf_counter() - t) * 1000
                print(f"  set_status done      {ms:8.1f} ms  answer {answer_size(r)} chars")

                t = time.perf_counter()
                r = await peer.list_tasks(c)
                dt = (time.perf_counter() - t) * 1000
                text_ok = all(i in "".join(getattr(b, "text", "") for b in r.content) for i in ids)
                print(
                    f"  list                 {dt:8.1f} ms  answer {answer_size(r)} chars "
                    f"(structured: {r.structured_content is not None}; all ids present: {text_ok})"
                )
            print(f"  total session        {(time.perf_counter() - t0) * 1000:8.0f} ms")
        err = (workdir / "stderr.log").read_text()
        print(f"  server stderr        {len(err.splitlines())} lines")
        return True
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("peers", nargs="*", default=list(PEERS))
    ap.add_argument("--tasks", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the temp workdirs")
    a = ap.parse_args()
    ok = True
    for name in a.peers:
        ok &= await probe(name, a.tasks, a.keep)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
