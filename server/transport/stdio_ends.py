"""The two ends of the stdio wire: reading stdin into chunks, writing answers to stdout.

On a pipe or a socket (what every MCP client gives its server) both run on the event loop,
non-blocking: a request then costs no hand-over to and from a reader thread and a writer
thread, each of which wakes a sleeping thread and moves the interpreter lock (about 0.1 ms a
hand-over on a busy machine, three per request). Anything else (a terminal, a regular file,
/dev/null) keeps the blocking reads and writes in two daemon threads: the event loop cannot
wait on a regular file, and a terminal's non-blocking flag would be shared with the shell.
A daemon thread stuck on its fd never keeps the process alive once serving ends.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import threading
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import anyio.from_thread
from anyio.abc import TaskGroup
from anyio.lowlevel import EventLoopToken
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from .stdio_frames import RequestId, encode

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the threads serve every kind of fd
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("planning_mcp")

READ_CHUNK = 64 * 1024

Chunk = bytes | None
Settle = Callable[[RequestId], None]  # the request's answer is in the pipe


@contextlib.contextmanager
def on_the_loop(fd: int) -> Iterator[bool]:
    """Make `fd` non-blocking for the block if the event loop can wait on it (a pipe or a
    socket); its flags are put back afterwards. Says whether it did."""
    if fcntl is None:  # pragma: no cover - Windows
        yield False
        return
    try:
        mode = os.fstat(fd).st_mode
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        yield False
        return
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        yield False
        return
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    try:
        yield True
    finally:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETFL, flags)


def start_reading(
    tg: TaskGroup, fd: int, polled: bool, out: MemoryObjectSendStream[Chunk], token: EventLoopToken
) -> None:
    """Read `fd` into `out` (b"" at its end); the next read waits until a chunk is taken."""
    if polled:
        tg.start_soon(_read_polled, fd, out)
    else:
        _daemon("stdin", _read_blocking, fd, out, token)


def start_writing(
    tg: TaskGroup,
    fd: int,
    polled: bool,
    answers: MemoryObjectReceiveStream[SessionMessage],
    settle: Settle,
    stopped: Callable[[], None],
    token: EventLoopToken,
) -> None:
    """Write each answer to `fd`, then `settle` its request; `stopped` once nothing more can
    be written (the answers ended, or the pipe broke)."""
    if polled:
        tg.start_soon(_write_polled, fd, answers, settle, stopped)
    else:
        _daemon("stdout", _write_blocking, fd, answers, settle, stopped, token)


def _daemon(name: str, target: Callable[..., None], *args: Any) -> None:
    threading.Thread(target=target, args=args, name=f"planning-mcp {name}", daemon=True).start()


def _read_once(fd: int) -> bytes | None:
    """A chunk, b"" at the end, None when nothing is there yet (a non-blocking fd)."""
    try:
        return os.read(fd, READ_CHUNK)
    except BlockingIOError:
        return None
    except OSError as e:  # the pipe failed: as good as the end of input
        log.warning("stdin: %s", e)
        return b""


async def _read_polled(fd: int, out: MemoryObjectSendStream[Chunk]) -> None:
    # BrokenResource / ClosedResource: nobody reads any more (serving has ended).
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError), out:
        while True:
            chunk = _read_once(fd)
            if chunk is None:
                await anyio.wait_readable(fd)
                continue
            await out.send(chunk)
            if not chunk:
                return


def _read_blocking(fd: int, out: MemoryObjectSendStream[Chunk], token: EventLoopToken) -> None:
    """Thread: read `fd` and hand over each chunk."""
    try:
        while True:
            chunk = _read_once(fd)
            if chunk is None:  # made non-blocking by someone else: a failed read, the end of input
                chunk = b""
            anyio.from_thread.run(out.send, chunk, token=token)
            if not chunk:
                break
        anyio.from_thread.run_sync(out.close, token=token)
    except BaseException:  # serving ended under us (stream closed, loop gone: even CancelledError)
        return


async def _write_polled(
    fd: int, answers: MemoryObjectReceiveStream[SessionMessage], settle: Settle, stopped: Callable[[], None]
) -> None:
    try:
        async for message in answers:
            data, answered = encode(message.message)
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(fd, view) :]
                except BlockingIOError:  # the pipe is full: the client reads slowly
                    await anyio.wait_writable(fd)
            if answered is not None:
                settle(answered)
    except OSError as e:  # EPIPE: the client closed its end
        log.warning("stdout: %s; stopping", e)
    stopped()


def _write_blocking(
    fd: int,
    answers: MemoryObjectReceiveStream[SessionMessage],
    settle: Settle,
    stopped: Callable[[], None],
    token: EventLoopToken,
) -> None:
    """Thread: write each outgoing message; a request's window slot frees only once its
    answer is in the pipe, which is what stops reading when the pipe is full."""
    try:
        while True:
            try:
                message = anyio.from_thread.run(answers.receive, token=token)
            except anyio.EndOfStream:
                break
            data, answered = encode(message.message)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if answered is not None:
                anyio.from_thread.run_sync(settle, answered, token=token)
    except OSError as e:  # EPIPE: the client closed its end
        log.warning("stdout: %s; stopping", e)
    except BaseException:  # serving ended under us (even CancelledError: a thread prints no traceback)
        return
    try:
        anyio.from_thread.run_sync(stopped, token=token)
    except BaseException:
        return
