"""Serving MCP over stdin/stdout with our own reading and writing loop, around the SDK's
serving loop (what `MCPServer.run("stdio")` runs).

The SDK's `stdio_server` (mcp 2.3.0) leaves some requests unanswered (see stdio_frames),
buffers a whole input line however long it is, and its dispatcher spawns one task per
request without waiting for the answer to be written: a client that stops reading stdout
makes the server keep every unanswered request and answer in memory. Here:
- each line is framed and checked by stdio_frames: at most MAX_REQUEST_BYTES (as over
  HTTP), and every request on a line is answered, with its id when it can be found (a line
  that cannot be read costs its own answer, never the server or the answers before it);
- at most MAX_IN_FLIGHT requests (MAX_IN_FLIGHT_BYTES of request text) are between being
  read and their answer being in the pipe; while that window is full stdin is not read, so
  a client that does not read blocks on its own writes instead of growing our memory.
  The server never sends requests to the client, so a full window cannot wait on a client
  response stuck behind it;
- on a pipe or socket stdin and stdout are read and written on the event loop, without
  blocking; on anything else in two daemon threads, which never keep the process alive once
  serving ends (Ctrl+C, end of stdin, the client gone) (stdio_ends);
- Ctrl+C (SIGINT) is the end of input: nothing more is read, the requests already read are
  answered (a tool call running in a worker thread finishes its writes), then the server
  exits 0. A second Ctrl+C exits at once with 130: the core replaces every file whole
  (atomic renames, ordered so a kill at any point leaves a consistent plan), so a call cut
  short loses its answer, never a file."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import sys
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from pydantic import ValidationError

from ..mcp import sdk
from . import stdio_ends
from .http import MAX_REQUEST_BYTES
from .stdio_ends import Chunk
from .stdio_frames import Lines, Refused, RequestId, TooLong, check_notification, diagnose, error

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

log = logging.getLogger("planning_mcp")

MAX_IN_FLIGHT = 32
MAX_IN_FLIGHT_BYTES = 4 * MAX_REQUEST_BYTES
DRAIN_SECONDS = 10.0  # at the end of input, how long answers still due may take to reach the pipe
STOPPED_AT_ONCE = 128 + signal.SIGINT  # 130: the shell's code for "ended by Ctrl+C"
BUSY_GRACE = 0.25  # seconds after the first Ctrl+C before saying a request is still in progress
CTRL_C = None  # in the chunk stream: stop reading (b"" is the end of stdin)


Key = tuple[bool, RequestId]  # (is a string, id): 1 and "1" are different requests


def _key(request_id: RequestId) -> Key:
    return (isinstance(request_id, str), request_id)


def run_stdio(server: MCPServer[Any]) -> None:
    """Serve `server` over this process's stdin and stdout until stdin ends."""
    anyio.run(serve_stdio, server)


async def serve_stdio(server: MCPServer[Any]) -> None:
    with _claim_std_fds() as (read_fd, write_fd):
        await serve_fds(server, read_fd, write_fd, ctrl_c=True)


@contextlib.contextmanager
def _claim_std_fds() -> Iterator[tuple[int, int]]:
    """Serve from private copies of fds 0 and 1, and point 0 at /dev/null and 1 at stderr
    meanwhile, as the SDK's transport does: a handler, hook or child process that reads
    stdin or prints must neither eat requests nor corrupt the wire."""
    sys.stdout.flush()
    read_fd, write_fd = os.dup(0), os.dup(1)  # non-inheritable: children never get the wire
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, 0)
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr: stray output goes nowhere rather than onto the wire
            os.dup2(null, 1)
        yield read_fd, write_fd
    finally:
        os.close(null)
        os.dup2(read_fd, 0)
        os.dup2(write_fd, 1)
        # read_fd and write_fd stay open: a daemon thread may still be blocked on them, and a
        # closed number could be reused under it.


class InFlight:
    """Requests read but not yet answered on the pipe; `admit` waits while the window is full."""

    def __init__(self, max_count: int = MAX_IN_FLIGHT, max_bytes: int = MAX_IN_FLIGHT_BYTES) -> None:
        self.max_count, self.max_bytes = max_count, max_bytes
        self._sizes: dict[Key, list[int]] = {}
        self.count = 0
        self.bytes = 0
        self._changed = anyio.Event()

    def _full(self, size: int) -> bool:
        # One request is always admitted, however large, or it could never be served.
        return self.count > 0 and (self.count >= self.max_count or self.bytes + size > self.max_bytes)

    async def admit(self, key: Key, size: int) -> None:
        while self._full(size):
            await self._changed.wait()
        self._sizes.setdefault(key, []).append(size)
        self.count += 1
        self.bytes += size

    async def empty(self) -> None:
        while self.count:
            await self._changed.wait()

    def settle(self, key: Key) -> None:
        """The request's answer is on the pipe (or it will never get one: cancelled)."""
        sizes = self._sizes.get(key)
        if not sizes:
            return
        self.bytes -= sizes.pop()
        self.count -= 1
        if not sizes:
            del self._sizes[key]
        self._changed.set()
        self._changed = anyio.Event()


async def serve_fds(server: MCPServer[Any], read_fd: int, write_fd: int, *, ctrl_c: bool = False) -> None:
    """Run the SDK's serving loop (what `MCPServer.run("stdio")` runs) over our reader and
    writer. `ctrl_c`: SIGINT ends the input (main thread only: it installs a signal handler)."""
    lowlevel = sdk.lowlevel(server)  # MCPServer serves stdio only through the SDK's transport
    inflight = InFlight()
    token = anyio.lowlevel.current_token()
    chunks_send, chunks = anyio.create_memory_object_stream[Chunk](0)
    requests_send, requests = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    answers_send, answers = anyio.create_memory_object_stream[SessionMessage](0)
    written = anyio.Event()
    async with anyio.create_task_group() as tg:

        def writer_stopped() -> None:
            written.set()
            tg.cancel_scope.cancel()  # nobody can hear us any more (or serving has ended)

        if ctrl_c:
            tg.start_soon(_stop_on_ctrl_c, chunks_send.clone(), inflight)
        with stdio_ends.on_the_loop(read_fd) as read_polled, stdio_ends.on_the_loop(write_fd) as write_polled:
            stdio_ends.start_reading(tg, read_fd, read_polled, chunks_send, token)
            stdio_ends.start_writing(
                tg, write_fd, write_polled, answers, lambda rid: inflight.settle(_key(rid)), writer_stopped, token
            )
            tg.start_soon(_read_requests, chunks, requests_send, answers_send.clone(), inflight)
            await lowlevel.run(requests, answers_send, lowlevel.create_initialization_options())
            with anyio.move_on_after(DRAIN_SECONDS):
                await written.wait()
            tg.cancel_scope.cancel()


async def _stop_on_ctrl_c(chunks: MemoryObjectSendStream[Chunk], inflight: InFlight) -> None:
    """First Ctrl+C: read nothing more and stop once what was read is answered. Second: now.

    Our own handler rather than asyncio's (which cancels the main task): that cancellation
    waited for a worker thread, and a second Ctrl+C then raised KeyboardInterrupt inside the
    loop: a thread's traceback, and the process still running 13 s later, its call long done."""
    try:
        receiver = anyio.open_signal_receiver(signal.SIGINT)
    except NotImplementedError:  # no signal handlers in this event loop: Python's default applies
        return
    with receiver as signals:
        stopping = False
        async with anyio.create_task_group() as tg:
            async for _ in signals:
                if stopping:
                    log.warning("stopping at once: a request in progress loses its answer (no file is half-written)")
                    sys.stderr.flush()
                    os._exit(STOPPED_AT_ONCE)  # worker threads cannot be cancelled: this is a kill
                stopping = True
                tg.start_soon(_say_if_still_busy, inflight)
                # In a task of its own: the reader may be waiting for room in the window, and
                # the second Ctrl+C must still be heard meanwhile.
                tg.start_soon(_send_ctrl_c, chunks)


async def _say_if_still_busy(inflight: InFlight) -> None:
    """Say why we are not gone yet, when a request is still in progress after a moment: an
    answer just written is counted until its writer thread returns, so an idle server would
    otherwise now and then claim a request in progress."""
    with anyio.move_on_after(BUSY_GRACE):
        while inflight.count:
            await anyio.sleep(0.01)
        return
    n = inflight.count
    what = "the request in progress is" if n == 1 else f"the {n} requests in progress are"
    log.warning("stopping once %s answered; Ctrl+C again to stop at once", what)


async def _send_ctrl_c(chunks: MemoryObjectSendStream[Chunk]) -> None:
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):  # the input had ended already
        await chunks.send(CTRL_C)


async def _read_requests(
    chunks: MemoryObjectReceiveStream[Chunk],
    requests: MemoryObjectSendStream[SessionMessage | Exception],
    answers: MemoryObjectSendStream[SessionMessage],
    inflight: InFlight,
) -> None:
    """Split stdin into lines (bounded), parse each, wait for room in the window, pass it on."""
    async with requests, answers, chunks:
        frames = Lines()
        drain = DRAIN_SECONDS
        async for chunk in chunks:
            if chunk is CTRL_C:
                # A line still being typed is not a request. What was read is answered however
                # long it takes (a TaskCompleted hook may run for minutes): the person who
                # pressed Ctrl+C was told a second one stops at once.
                drain = math.inf
                break
            if not chunk:
                for line in frames.end():
                    await _handle(line, requests, answers, inflight)
                break
            for line in frames.feed(chunk):
                await _handle(line, requests, answers, inflight)
        # The SDK cancels what is still running when its input ends, and a request whose
        # task had not started yet then gets no answer at all: let them finish first.
        with anyio.move_on_after(drain):
            await inflight.empty()


async def _handle(
    line: bytes | TooLong,
    requests: MemoryObjectSendStream[SessionMessage | Exception],
    answers: MemoryObjectSendStream[SessionMessage],
    inflight: InFlight,
) -> None:
    if isinstance(line, TooLong):
        await answers.send(SessionMessage(line.answer()))
        return
    if not line.strip():
        return  # a blank line (or a stray \r) is not a message
    found = _parse(line)
    if found is None:
        return
    if isinstance(found, Refused):
        for answer in found.answers:
            await answers.send(SessionMessage(answer))
        return
    message = found
    metadata = None
    if isinstance(message, types.JSONRPCRequest):
        key = _key(message.id)
        await inflight.admit(key, len(line))
        metadata = ServerMessageMetadata(on_request_unanswered=partial(_settle_async, inflight, key))
    await requests.send(SessionMessage(message, metadata=metadata))


def _parse(line: bytes) -> types.JSONRPCMessage | Refused | None:
    """The message on `line`, or the errors that answer it, or None (nothing to answer)."""
    try:
        message: types.JSONRPCMessage = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError:
        pass
    else:
        if isinstance(message, types.JSONRPCNotification):
            return check_notification(line) or message
        return message
    try:
        return diagnose(line)
    except Exception as e:  # a line we failed to read must cost its answer, never the server (nor earlier answers)
        log.exception("could not read a line of input")
        return Refused((error(None, types.INTERNAL_ERROR, f"Internal error: the line could not be read ({e})"),))


async def _settle_async(inflight: InFlight, key: Key) -> None:
    """The dispatcher's hook for a request that ends without an answer (it was cancelled)."""
    inflight.settle(key)
