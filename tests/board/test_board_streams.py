"""The board's live event streams over raw HTTP, against a real `planning-mcp web` child:
at most MAX_STREAMS open at once, counted when a stream is admitted (so a burst of
simultaneous requests cannot all get in), and each one given back when its client goes;
a board rebuilt when it changes with no write (a lease runs out)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from planning_core import Planner
from planning_core.stores.files import FileStore
from server.board.routes import MAX_STREAMS
from tests.support.procs import HOST, answer_start, wait_until

from .conftest import known_plan
from .test_web_command import web

BURST = 150  # more than MAX_STREAMS, all sent before any answer is read
ANSWER_WAIT = 60.0  # a bound on "never hangs", on a busy machine
LEASE = 5  # seconds: a claim that runs out while the board is open


def open_streams(port: int, count: int, stack: ExitStack) -> list[socket.socket]:
    """`count` connections, each with its GET /board/events written, none read yet."""
    request = f"GET /board/events HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode()
    sockets = []
    for _ in range(count):
        s = stack.enter_context(socket.create_connection((HOST, port), timeout=ANSWER_WAIT))
        s.sendall(request)
        sockets.append(s)
    return sockets


def status_of(s: socket.socket) -> int:
    """The status code of the answer on `s` (its status line, read to the end of the headers)."""
    return answer_start(s)[0]


@contextmanager
def board_port(tmp_path: Path) -> Iterator[int]:
    root = tmp_path / "root"
    known_plan(root)
    with web(tmp_path, root) as base:
        yield int(base.rsplit(":", 1)[1])


def test_a_burst_of_streams_admits_the_bound_and_refuses_the_rest(tmp_path: Path) -> None:
    with board_port(tmp_path) as port:
        with ExitStack() as first:
            statuses = [status_of(s) for s in open_streams(port, BURST, first)]
            assert statuses.count(200) == MAX_STREAMS, statuses
            assert statuses.count(503) == BURST - MAX_STREAMS, statuses

        # Every client went away: each of their places is given back, and a full set
        # of new pages gets in again (a refused one would mean a place was kept).
        def all_admitted() -> bool:
            with ExitStack() as trial:
                admitted = [status_of(s) for s in open_streams(port, MAX_STREAMS, trial)]
            return admitted.count(200) == MAX_STREAMS

        wait_until(all_admitted, "the places of closed streams given back", timeout=ANSWER_WAIT, every=0.2)


def board_events(s: socket.socket) -> Iterator[dict[str, Any]]:
    """The boards sent on the event stream `s` (after its headers), as they arrive."""
    buffer = b""
    deadline = time.monotonic() + ANSWER_WAIT  # keep-alives alone must not keep the test waiting
    while True:
        while b"\n\n" not in buffer:
            assert time.monotonic() < deadline, "no board within the bound"
            chunk = s.recv(65536)
            assert chunk, "the stream ended"
            buffer += chunk
        event, buffer = buffer.split(b"\n\n", 1)
        lines = event.split(b"\n")
        if b"event: board" in lines:
            yield json.loads(next(line for line in lines if line.startswith(b"data: "))[6:])


def column_of(board: dict[str, Any], task_id: int) -> str:
    return str(next(row["column"] for row in board["plan"]["tasks"] if row["id"] == task_id))


def test_a_lease_running_out_moves_its_task_on_an_open_board_with_no_write(tmp_path: Path) -> None:
    """The board is rebuilt when a plan changes; a lease runs out with no change, and the
    page must still see the task go back to Ready."""
    root = tmp_path / "root"
    name = known_plan(root)
    with web(tmp_path, root) as base, ExitStack() as stack:
        (s,) = open_streams(int(base.rsplit(":", 1)[1]), 1, stack)
        assert status_of(s) == 200
        boards = board_events(s)
        assert column_of(next(boards), 4) == "ready"
        Planner(FileStore(root)).update_task(name, 4, status="in_progress", owner="bob", lease_seconds=LEASE)
        assert column_of(next(boards), 4) == "in_progress"
        assert column_of(next(boards), 4) == "ready"  # the next board sent, with no write in between
