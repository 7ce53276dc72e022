"""Which modules one real TaskUpdate `{"taskId": "next"}` over stdio runs through.

`python -m tests.support.request_walk` starts a real stdio server (this module's `serve`,
which is `python -m server` with a profiler installed in every thread), makes a plan with
three tasks, claims one (so every lazy import has happened), then turns the profiler on
(SIGUSR1), claims the next one, reads the answer, turns it off (SIGUSR2) and prints the
modules whose Python functions ran meanwhile, in the order first entered: this project's
(`server`, `planning_core`) and every one (the SDK, anyio, pydantic, the standard library).
docs/architecture.md's "One request, end to end" counts come from it.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

OURS = ("server", "planning_core")


def serve(argv: list[str]) -> int:
    """The server, with a profiler that records modules while switched on."""
    out = Path(os.environ["REQUEST_WALK_OUT"])
    seen: dict[str, str] = {}  # module: the first function entered in it
    on = [False]

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if on[0] and event == "call":
            seen.setdefault(str(frame.f_globals.get("__name__", "?")), frame.f_code.co_name)

    def start(_sig: int, _frame: Any) -> None:
        seen.clear()
        on[0] = True
        sys.stderr.write("request-walk: on\n")
        sys.stderr.flush()

    def stop(_sig: int, _frame: Any) -> None:
        on[0] = False
        out.write_text(json.dumps(list(seen.items())))

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    threading.setprofile(profile)
    sys.setprofile(profile)
    from server.entry import main

    return main(argv)


def _wait_for(test: Any, what: str) -> None:
    deadline = time.monotonic() + 20
    while not test():
        if time.monotonic() > deadline:
            raise SystemExit(f"request_walk: no {what} within 20 s")
        time.sleep(0.01)


def walk() -> list[tuple[str, str]]:
    from tests.support.raw_stdio import RawStdio

    with tempfile.TemporaryDirectory() as tmp:
        root, out = Path(tmp) / "root", Path(tmp) / "walk.json"
        root.mkdir()
        os.environ["REQUEST_WALK_OUT"] = str(out)
        command = (sys.executable, "-m", "tests.support.request_walk", "serve")
        server = RawStdio(root, Path(tmp) / "stderr", command=command)
        try:
            server.initialize()
            tasks = [{"subject": f"task {i}"} for i in (1, 2, 3)]
            made = server.call("PlanCreate", {"title": "walk", "analysis": "-", "approach": "-", "tasks": tasks})
            warm = server.call("TaskUpdate", {"taskId": "next", "owner": "warm", "status": "in_progress"})
            assert not made.get("isError") and not warm.get("isError"), (made, warm)
            server.proc.send_signal(signal.SIGUSR1)
            _wait_for(lambda: "request-walk: on" in server.stderr(), "switch on")
            answer = server.call("TaskUpdate", {"taskId": "next", "owner": "walker", "status": "in_progress"})
            assert not answer.get("isError"), answer
            server.proc.send_signal(signal.SIGUSR2)
            _wait_for(out.exists, "record")
            return [(m, f) for m, f in json.loads(out.read_text())]
        finally:
            server.close()


def main() -> int:
    if sys.argv[1:2] == ["serve"]:
        return serve(sys.argv[2:])
    modules = walk()
    ours = [(m, f) for m, f in modules if m.split(".")[0] in OURS]
    print(f"project modules ({len(ours)}), each with the first function entered:")
    for m, f in ours:
        print(f"  {m}.{f}")
    print(f"all modules: {len(modules)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
