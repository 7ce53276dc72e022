"""The board's live event streams over raw HTTP, against a real `planning-mcp web` child:
at most MAX_STREAMS open at once, counted when a stream is admitted (so a burst of
simultaneous requests cannot all get in), and each one given back when its client goes."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from server.board.routes import MAX_STREAMS
from tests.support.procs import HOST, wait_until

from .conftest import known_plan
from .test_web_command import web

BURST = 150  # more than MAX_STREAMS, all sent before any answer is read
ANSWER_WAIT = 60.0  # a bound on "never hangs", on a busy machine


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
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            break
        head += chunk
    return int(head.split(b" ", 2)[1])


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
