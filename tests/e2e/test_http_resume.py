"""Promise: over streamable HTTP an answer or notification in flight survives a dropped stream.
Every SSE event carries an id; a GET with `Last-Event-ID` sends what came after it, to the
client's own session only, from a store that stays bounded. Real `planning-mcp serve
--transport http` children on 127.0.0.1 ports, driven with raw HTTP (the SDK client hides ids),
on every store a child can be given (store_url); the test that touches plan folders to make
the watcher notify stays on files."""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from server.transport.eventstore import MAX_EVENT_BYTES_TOTAL, MAX_EVENTS_PER_STREAM, MAX_EVENTS_TOTAL
from tests.support.procs import Served, serving, wait_until
from tests.support.store_urls import serving_store
from tests.support.waits import bound

PROTOCOL = "2025-11-25"  # the first version with priming events, so the first that can resume
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
DEADLINE = bound(30)
Event = dict[str, str]


def sse(response: httpx2.Response) -> Iterator[Event]:
    """The events of an SSE body as {field: value}, in order, as they arrive."""
    event: Event = {}
    for line in response.iter_lines():
        if not line:
            if event:
                yield event
            event = {}
            continue
        name, _, value = line.partition(":")
        event[name] = value[1:] if value.startswith(" ") else value


def message(event: Event) -> dict[str, Any]:
    return dict(json.loads(event["data"]))


class Session:
    """One MCP session over raw HTTP: initialize, then requests with chosen ids."""

    def __init__(self, srv: Served) -> None:
        self.url = f"{srv.base}/mcp"
        self.http = httpx2.Client(timeout=httpx2.Timeout(bound(20)))
        init = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "resume", "version": "1"}}
        with self.http.stream("POST", self.url, json=rpc(0, "initialize", init), headers=ACCEPT) as r:
            assert r.status_code == 200, r.read()
            self.headers = {**ACCEPT, "mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": PROTOCOL}
            self.init_events = list(sse(r))
        notified = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert self.http.post(self.url, json=notified, headers=self.headers).status_code == 202

    def request(self, rid: int, method: str, params: dict[str, Any] | None = None) -> list[Event]:
        """Every event of the POST's SSE answer (the stream ends with the answer)."""
        with self.http.stream("POST", self.url, json=rpc(rid, method, params), headers=self.headers) as r:
            assert r.status_code == 200, r.read()
            return list(sse(r))

    def call(self, rid: int, tool: str, **arguments: Any) -> dict[str, Any]:
        answer = message(self.request(rid, "tools/call", {"name": tool, "arguments": arguments})[-1])
        assert not answer["result"]["isError"], answer
        return answer

    def replay(self, last_event_id: str) -> list[Event]:
        """What a reconnect with Last-Event-ID gets from the store: the events before the SDK's
        new priming event (after which the stream goes on live), or all of them when the stream
        ends right after the replay."""
        got: list[Event] = []
        with self.http.stream("GET", self.url, headers={**self.headers, "Last-Event-ID": last_event_id}) as r:
            assert r.status_code == 200, r.read()
            for event in sse(r):
                if not event.get("data"):
                    break
                got.append(event)
        return got

    def replay_until(self, last_event_id: str, done: Callable[[list[Event]], bool]) -> list[Event]:
        """Reconnect as a client does until the replay holds what `done` waits for (an event the
        server produces shortly after, e.g. on the watcher's next tick)."""
        deadline = time.monotonic() + DEADLINE
        while True:
            got = self.replay(last_event_id)
            if done(got) or time.monotonic() > deadline:
                return got


def rpc(rid: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params is not None else {})}


@contextmanager
def session(srv: Served) -> Iterator[Session]:
    s = Session(srv)
    try:
        yield s
    finally:
        s.http.close()


def ids(events: list[Event]) -> list[int]:
    return [int(e["id"]) for e in events]


def test_every_event_has_an_id(store_url: str, tmp_path: Path) -> None:
    with serving_store(tmp_path, "http", store_url) as srv, session(srv) as s:
        events = s.init_events + s.request(1, "ping") + s.request(2, "tools/list")
        assert all("id" in e for e in events), events
        assert ids(events) == sorted(set(ids(events)))  # unique and in the order sent
        priming, answer = s.request(3, "tools/call", {"name": "PlanList", "arguments": {}})
        assert priming["data"] == "" and message(answer)["id"] == 3
        with s.http.stream("GET", s.url, headers=s.headers) as live:  # the server → client stream
            s.request(4, "resources/subscribe", {"uri": "plans://active"})
            s.call(5, "PlanCreate", title="Notified", analysis="a", approach="b")
            note = next(sse(live))
        assert message(note)["method"] == "notifications/resources/updated" and int(note["id"]) > ids(events)[-1]


def test_notifications_missed_while_disconnected_are_replayed(store_url: str, tmp_path: Path) -> None:
    with serving_store(tmp_path, "http", store_url) as srv, session(srv) as s:
        s.request(1, "resources/subscribe", {"uri": "plans://active"})
        with s.http.stream("GET", s.url, headers=s.headers) as live:
            s.call(2, "PlanCreate", title="Resume", analysis="a", approach="b")
            seen = next(sse(live))
        # Disconnected: the next change is notified while nobody listens.
        s.call(3, "TaskCreate", subject="Made while away", description="d")
        missed = s.replay_until(seen["id"], lambda got: bool(got))
        assert missed, "the notification sent while disconnected was not replayed"
        assert all(int(e["id"]) > int(seen["id"]) for e in missed)
        assert {message(e)["method"] for e in missed} <= {
            "notifications/resources/updated",
            "notifications/resources/list_changed",
        }


def test_answer_in_flight_survives_a_dropped_post_stream(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client's POST stream drops while the server is still working on the answer (a
    TaskCompleted hook holds it); the answer, produced with nobody listening, is replayed."""
    started, go = tmp_path / "hook-started", tmp_path / "hook-go"
    os.mkfifo(go)
    hooks = tmp_path / "hooks.json"
    command = f"touch '{started}'; cat '{go}' >/dev/null"
    hooks.write_text(json.dumps({"TaskCompleted": [{"command": command, "timeout": 60}]}))
    monkeypatch.setenv("PLANNING_MCP_HOOKS", str(hooks))
    with serving_store(tmp_path, "http", store_url) as srv, session(srv) as s:
        s.call(1, "PlanCreate", title="Drop", analysis="a", approach="b", tasks=[{"subject": "Go", "description": "d"}])
        body = rpc(2, "tools/call", {"name": "TaskUpdate", "arguments": {"taskId": 1, "status": "completed"}})
        with (
            httpx2.Client(timeout=bound(20)) as dropped,
            dropped.stream("POST", s.url, json=body, headers=s.headers) as r,
        ):
            priming = next(sse(r))
            wait_until(started.exists, "the TaskCompleted hook to start", DEADLINE)
        # The connection is gone; now let the server finish the call.
        release(go)
        replayed = s.replay_until(priming["id"], lambda got: any(message(e).get("id") == 2 for e in got))
        answers = [message(e) for e in replayed if message(e).get("id") == 2]
        assert len(answers) == 1, replayed
        assert not answers[0]["result"]["isError"], answers
        assert answers[0]["result"]["content"][0]["text"].startswith("Updated task #1 status"), answers


def test_a_session_replays_only_its_own_events(store_url: str, tmp_path: Path) -> None:
    """Clients count request ids alike; a resume must not hand one session another's answer."""
    with serving_store(tmp_path, "http", store_url) as srv, session(srv) as a, session(srv) as b:
        b_priming, b_answer = b.request(7, "ping")
        a_priming, a_answer = a.request(7, "tools/call", {"name": "PlanList", "arguments": {}})
        assert b.replay(b_priming["id"]) == [b_answer]  # not a's answer to its own request 7
        assert a.replay(a_priming["id"]) == [a_answer]
        assert b.replay(a_priming["id"]) == []  # another session's event id gives nothing away
        for unknown in ("0", "abc", "9" * 40, str(int(a_answer["id"]) + 1000)):
            assert b.replay(unknown) == []
        assert message(b.request(8, "ping")[-1])["result"] == {}  # and the server goes on


def test_store_is_bounded_in_entries(store_url: str, tmp_path: Path) -> None:
    with serving_store(tmp_path, "http", store_url) as srv, session(srv) as s:
        first, _ = s.request(1, "ping")
        for rid in range(2, MAX_EVENTS_TOTAL // 2 + 2):  # a priming event and an answer each
            s.request(rid, "ping")
        last_priming, last_answer = s.request(9999, "ping")
        assert s.replay(first["id"]) == []  # evicted, oldest first
        assert s.replay(last_priming["id"]) == [last_answer]


def test_store_is_bounded_in_bytes(store_url: str, tmp_path: Path) -> None:
    """Big answers (a board of 500 long subjects, read again and again) evict older ones by
    size, and the server's memory stops growing once the store is full."""
    board = {"name": "TaskList", "arguments": {"limit": 1000}}
    with serving_store(tmp_path, "http", store_url) as srv, session(srv) as s:
        tasks = [{"subject": f"{n:03} " + "s" * 196, "description": "d"} for n in range(500)]
        s.call(1, "PlanCreate", title="Big", analysis="a", approach="b", tasks=tasks)
        first, answer = s.request(2, "tools/call", board)
        size = len(answer["data"])
        fill = MAX_EVENT_BYTES_TOTAL // size + 2
        for rid in range(3, 3 + fill):
            s.request(rid, "tools/call", board)
        full = rss(srv)
        more = 2 * fill
        for rid in range(1000, 1000 + more):
            last_priming, last_answer = s.request(rid, "tools/call", board)
        grown = rss(srv) - full
        assert s.replay(first["id"]) == []
        assert s.replay(last_priming["id"]) == [last_answer]
        # Kept, the `more` answers would add their size again (twice the whole budget).
        assert grown < MAX_EVENT_BYTES_TOTAL // 2, (
            f"RSS grew {grown / 2**20:.1f} MiB over {more} answers of {size / 1024:.0f} KiB after the store was full"
        )


def test_one_stream_holds_at_most_its_share(tmp_path: Path) -> None:
    """A chatty notification stream keeps only its newest events, so it cannot push other
    streams' answers out of the store."""
    with serving(tmp_path, "http") as srv, session(srv) as s:
        s.request(1, "resources/subscribe", {"uri": "plans://active"})
        with s.http.stream("GET", s.url, headers=s.headers) as live:
            s.call(2, "PlanCreate", title="Chatty 0", analysis="a", approach="b")
            oldest = next(sse(live))
        plans = []
        for n in range(1, MAX_EVENTS_PER_STREAM + 10):
            answer = s.call(10 + 2 * n, "PlanCreate", title=f"Chatty {n}", analysis="a", approach="b")
            plans.append(answer["result"]["structuredContent"]["plan"]["name"])
            s.request(11 + 2 * n, "resources/subscribe", {"uri": f"plans://{plans[-1]}"})
        answer_priming, answer = s.request(500, "ping")
        # One watcher tick notices every plan folder touched at once: a notification for each.
        later = time.time() + 5
        for name in plans:
            os.utime(srv_root(tmp_path) / "todo" / name, (later, later))
        # Later events follow `oldest` on its stream, so nothing replayed means it was dropped.
        wait_until(lambda: s.replay(oldest["id"]) == [], "the notification stream to drop its oldest events", DEADLINE)
        assert s.replay(answer_priming["id"]) == [answer]  # the other stream's answer stays


def srv_root(tmp_path: Path) -> Path:
    return tmp_path / "root-http"  # serving()'s default root for the http transport


def rss(srv: Served) -> int:
    for line in Path(f"/proc/{srv.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def release(fifo: Path) -> None:
    """Write to the FIFO the hook reads, once it has opened it (bounded, never blocks)."""
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            assert e.errno == errno.ENXIO and time.monotonic() < deadline, e
            time.sleep(0.02)
            continue
        os.write(fd, b"go\n")
        os.close(fd)
        return
