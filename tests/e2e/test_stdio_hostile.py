"""A hostile stdio client: raw bytes into a real `planning-mcp` subprocess. Every request
with an id is answered (deep nesting, lone surrogates, bytes that are not UTF-8, lines
over 4 MiB), the server keeps serving afterwards, and a client that stops reading stdout
makes the server stop reading stdin instead of growing without bound."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from server.transport.http import MAX_REQUEST_BYTES
from server.transport.stdio_frames import MAX_NESTING
from tests.support.procs import console_script, stop
from tests.support.raw_stdio import RawStdio
from tests.support.waits import bound

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


@contextmanager
def serving(tmp_path: Path, *extra: str) -> Iterator[RawStdio]:
    """`planning-mcp --root R` over pipes, initialized (2025-06-18 handshake); answers
    must come in the order asked for."""
    wire = RawStdio(
        tmp_path / "root", tmp_path / "stderr.log", *extra, command=[console_script()], cwd=tmp_path, in_order=True
    )
    try:
        wire.initialize()
        yield wire
    finally:
        stop(wire.proc)


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawStdio]:
    """One server for the line-level attacks: each test also checks it still serves."""
    with serving(tmp_path_factory.mktemp("hostile")) as w:
        yield w


def call_line(request_id: int, arguments: str) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"TaskList","arguments":%s}}\n' % (
        request_id,
        arguments.encode(),
    )


def nested(depth: int, kind: str) -> str:
    if kind == "object":
        return '{"a":' * depth + "1" + "}" * depth
    return '{"a":' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("kind", ["object", "array"])
@pytest.mark.parametrize("depth", [200, 10_000])
def test_deep_nesting_gets_an_error_with_its_id(wire: RawStdio, depth: int, kind: str) -> None:
    wire.send(call_line(depth, nested(depth, kind)))
    answer = wire.answer(depth)
    assert answer["error"]["code"] == INVALID_REQUEST
    assert f"at most {MAX_NESTING}" in answer["error"]["message"]
    wire.assert_serving()


def test_nesting_within_the_limit_is_served(wire: RawStdio) -> None:
    wire.send(call_line(11, nested(MAX_NESTING - 2, "object")))  # + the envelope and params
    answer = wire.answer(11)
    assert "result" in answer, answer  # a tool's own answer (it takes no argument "a")


def test_a_lone_surrogate_gets_an_answer_with_its_id(wire: RawStdio) -> None:
    wire.send(call_line(12, '{"plan":"\\ud800"}'))
    answer = wire.answer(12)
    assert answer["error"]["code"] == INVALID_PARAMS
    assert "\\ud800" in answer["error"]["message"]
    # A surrogate pair is an ordinary character: served (the tool refuses the plan name).
    wire.send(call_line(13, '{"plan":"\\ud83d\\ude00"}'))
    served = wire.answer(13)
    assert served["result"]["isError"] is True
    assert "\U0001f600" in served["result"]["content"][0]["text"]
    wire.assert_serving()


def test_a_lone_surrogate_as_the_id_is_echoed(wire: RawStdio) -> None:
    wire.send(b'{"jsonrpc":"2.0","id":"\\udc00x","method":"ping"}\n')
    answer = wire.answer("\udc00x")
    assert answer["error"]["code"] == INVALID_REQUEST
    wire.assert_serving()


def test_bytes_that_are_not_utf8_are_a_parse_error(wire: RawStdio) -> None:
    wire.send(call_line(14, '{"plan":"PLACEHOLDER"}').replace(b"PLACEHOLDER", b"\xff\xfe\xc3"))
    answer = wire.answer(14)
    assert answer["error"]["code"] == PARSE_ERROR
    assert "UTF-8" in answer["error"]["message"]
    wire.assert_serving()


@pytest.mark.parametrize(
    ("line", "request_id", "code"),
    [
        (b"hello", None, PARSE_ERROR),
        (b'{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":', 15, PARSE_ERROR),
        (b'{"jsonrpc":"2.0","id":17}', 17, INVALID_REQUEST),
        (b'{"jsonrpc":"1.0","id":"18","method":"ping"}', "18", INVALID_REQUEST),
        (b"[]", None, INVALID_REQUEST),
    ],
)
def test_lines_that_are_not_requests_are_answered(wire: RawStdio, line: bytes, request_id: Any, code: int) -> None:
    wire.send(line + b"\n")
    answer = wire.answer(request_id)
    assert answer["error"]["code"] == code, answer
    wire.assert_serving()


def answers(wire: RawStdio, count: int) -> list[dict[str, Any]]:
    """The next `count` answers, in the order written (a refusal is written as soon as its
    line is read, so it may overtake the answer to a request sent before it)."""
    found = []
    while len(found) < count:
        message = wire.message()
        if "id" in message:
            found.append(message)
    return found


def test_an_id_too_long_to_read_is_a_parse_error_and_the_server_goes_on(wire: RawStdio) -> None:
    """Python reads at most 4,300 digits as an integer: such an id killed the server, with
    the answers to the requests read before it. As over HTTP: -32700, id null."""
    digits = sys.get_int_max_str_digits() + 700
    wire.send(
        call_line(30, "{}")
        + b'{"jsonrpc":"2.0","id":%s,"method":"ping"}\n' % (b"9" * digits)
        + call_line(31, '{"limit":%s}' % ("9" * digits))  # the number elsewhere: its request's id
        + call_line(32, "{}")
    )
    by_id = {answer["id"]: answer for answer in answers(wire, 4)}
    assert set(by_id) == {30, None, 31, 32}
    assert "result" in by_id[30] and "result" in by_id[32]
    for refused in (by_id[None], by_id[31]):
        assert refused["error"]["code"] == PARSE_ERROR
        assert f"a number of {digits} digits" in refused["error"]["message"]
    wire.assert_serving()


@pytest.mark.parametrize("bad_id", ["1.5", "1.0", "true", "null", "{}", "[]", '{"id":1}'])
def test_an_id_that_is_not_a_string_or_an_integer_is_an_invalid_request(wire: RawStdio, bad_id: str) -> None:
    """JSON-RPC: a request whose id cannot be used is an Invalid Request answered with id
    null. The SDK's parser took these for notifications: no answer at all."""
    wire.send(b'{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"TaskList"}}\n' % bad_id.encode())
    answer = wire.answer(None)
    assert answer["error"]["code"] == INVALID_REQUEST
    assert f"an id is a string or an integer, not {bad_id}" in answer["error"]["message"]
    wire.assert_serving()


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_an_id_that_is_not_json_is_a_parse_error(wire: RawStdio, constant: str) -> None:
    """NaN and ±Infinity are no JSON: JSON-RPC's Parse error, id null. The SDK's parser
    reads them as numbers and took the request for a notification: no answer at all."""
    wire.send(b'{"jsonrpc":"2.0","id":%s,"method":"ping"}\n' % constant.encode())
    answer = wire.answer(None)
    assert answer["error"] == {"code": PARSE_ERROR, "message": f"Parse error: {constant} is not JSON"}
    wire.assert_serving()


def test_two_messages_on_one_line_each_get_an_answer_and_neither_runs(wire: RawStdio) -> None:
    """A line is one message: two objects on one line are not JSON text, so neither is run,
    and each request on it is told (only the last one was, and the other client waited)."""
    plan = {"title": "Glued", "analysis": "a", "approach": "b", "name": "glued-together"}
    create = {"jsonrpc": "2.0", "id": 40, "method": "tools/call", "params": {"name": "PlanCreate", "arguments": plan}}
    ping = {"jsonrpc": "2.0", "id": "41", "method": "ping"}
    notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    wire.send(f"{json.dumps(create)}{json.dumps(ping)} {json.dumps(notice)}\n".encode())
    got = answers(wire, 2)
    assert [answer["id"] for answer in got] == [40, "41"]
    for answer in got:
        assert answer["error"]["code"] == PARSE_ERROR
        assert "more than one JSON value on the line" in answer["error"]["message"]
    listed = wire.call("PlanList", {"includeDone": True}, rid="plans")
    assert "glued-together" not in json.dumps(listed)
    wire.assert_serving()


def test_a_5_mb_line_is_refused_and_not_kept(wire: RawStdio) -> None:
    before = wire.rss_mb()
    big = "x" * (5 * 1024 * 1024)
    wire.send(call_line(19, json.dumps({"subject": "big", "description": big})))
    answer = wire.answer(19)
    assert answer["error"]["code"] == INVALID_REQUEST
    assert str(MAX_REQUEST_BYTES) in answer["error"]["message"]
    # A line far over the limit is dropped as it arrives, never held whole.
    huge = b"y" * (1024 * 1024)
    wire.send(b'{"jsonrpc":"2.0","id":20,"method":"ping","params":{"pad":"')
    for _ in range(64):
        wire.send(huge)
    wire.send(b'"}}\n')
    assert wire.answer(20)["error"]["code"] == INVALID_REQUEST
    assert wire.rss_mb() - before < 40, f"RSS {before:.0f} -> {wire.rss_mb():.0f} MB after a 64 MB line"
    wire.assert_serving()


def test_a_client_that_stops_reading_does_not_grow_the_server(tmp_path: Path) -> None:
    with serving(tmp_path) as wire:
        tasks = [{"subject": f"task {i}", "description": "d" * 200} for i in range(8)]
        created = wire.call("PlanCreate", {"title": "Pressure", "analysis": "a", "approach": "b", "tasks": tasks})
        assert created["isError"] is False, created
        for i in range(200):  # warm up: the baseline is a server that has served this call
            wire.call("TaskList", {}, rid=f"warm-{i}")  # (fails unless it is a result)
        baseline = wire.rss_mb()

        total = 10_000
        lines = [call_line(100 + i, "{}") for i in range(total)]
        written = [0]

        def flood() -> None:
            try:
                for start in range(0, total, 50):
                    wire.send(b"".join(lines[start : start + 50]))
                    written[0] = start + 50
            except (BrokenPipeError, ValueError):
                return  # the server was stopped at the end of the test

        threading.Thread(target=flood, daemon=True).start()
        peak, last, stalled_since = baseline, -1, time.monotonic()
        deadline = time.monotonic() + bound(60)
        # Until every request is written, or the writes have not moved for 3 s (the server
        # stopped reading), or 60 s.
        while time.monotonic() < deadline and written[0] < total and time.monotonic() - stalled_since < 3:
            time.sleep(0.25)
            peak = max(peak, wire.rss_mb())
            if written[0] != last:
                last, stalled_since = written[0], time.monotonic()
        peak = max(peak, wire.rss_mb())
        assert written[0] < total, "the server read every request although its answers were not read"
        assert peak < min(2 * baseline, baseline + 100), f"RSS {baseline:.0f} -> {peak:.0f} MB"

        # Reading again: every request is answered, and the server still serves.
        answered: set[int] = set()
        deadline = time.monotonic() + bound(240)
        while len(answered) < total and time.monotonic() < deadline:
            message = wire.message(timeout=bound(30))
            if "id" in message:
                assert "result" in message, message
                answered.add(message["id"])
        assert answered == set(range(100, 100 + total))
        wire.assert_serving()
        print(f"\nnon-reading client: RSS {baseline:.0f} MB -> peak {peak:.0f} MB, writes stalled at {last} requests")


def test_cancelled_requests_free_their_place(tmp_path: Path) -> None:
    """A cancelled request gets no answer; it must still leave the window, or enough of
    them would stop the server reading for good."""
    hooks = tmp_path / "hooks.json"
    hooks.write_text(json.dumps({"TaskCreated": [{"command": "sleep 0.3"}]}))
    with serving(tmp_path, "--hooks", str(hooks)) as wire:
        plan = {"title": "Cancel", "analysis": "a", "approach": "b", "tasks": [{"subject": "t", "description": "d"}]}
        assert wire.call("PlanCreate", plan)["isError"] is False
        for i in range(40):  # more than the window holds
            wire.request("tools/call", {"name": "TaskCreate", "arguments": {"subject": f"s{i}"}}, rid=100 + i)
            wire.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}\n' % (100 + i))
        wire.request("tools/call", {"name": "TaskList", "arguments": {}}, rid=999)
        deadline = time.monotonic() + bound(60)
        while True:
            message = wire.message(timeout=max(deadline - time.monotonic(), 0.01))
            if message.get("id") == 999:
                assert "result" in message
                break
        wire.assert_serving()


def test_end_of_input_answers_what_was_read_and_exits(tmp_path: Path) -> None:
    """The SDK's own transport answers only part of these (it cancels what is running when
    stdin ends, and a request not yet started gets nothing): each one is answered here."""
    with serving(tmp_path) as wire:
        wire.send(b"".join(call_line(100 + i, "{}") for i in range(50)))
        assert wire.proc.stdin is not None
        wire.proc.stdin.close()
        answered: set[int] = set()
        while len(answered) < 50:
            message = wire.message()
            assert "result" in message, message
            answered.add(message["id"])
        assert answered == set(range(100, 150))
        assert wire.proc.wait(timeout=bound(20)) == 0


def test_a_client_that_closes_stdout_stops_the_server(tmp_path: Path) -> None:
    with serving(tmp_path) as wire:
        assert wire.proc.stdout is not None
        wire.proc.stdout.close()
        wire.request("ping", rid=1)
        assert wire.proc.wait(timeout=bound(20)) == 0
