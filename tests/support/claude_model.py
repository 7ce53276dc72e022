"""A scripted model for Claude Code's real CLI: an HTTP server on 127.0.0.1 answering
`POST /v1/messages` with server-sent events, as Anthropic's API streams them.

Claude Code sends every request to `ANTHROPIC_BASE_URL`; this server records each body
(what the model would see: tools, system prompt, messages, tool results, hook context) and
answers from a script: a function of the request body returning the reply's content blocks
(text and tool_use). Requests Claude Code makes for itself (titles, topic checks: they
offer no tools) get a short text.

`ClaudeSession` runs the CLI itself with a throwaway HOME and config dir, offline.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NoReturn

import pytest

# The sessions are driven against one pinned CLI (.ci/run installs it): its screens and requests
# are what these tests read, and they change between releases.
CLAUDE_BIN_ENV = "PLANNING_MCP_CLAUDE_SESSION_BIN"
REQUIRE_CLAUDE_ENV = "PLANNING_MCP_REQUIRE_CLAUDE"
DUMMY_KEY = "sk-ant-api03-scripted-model-on-loopback-0123456789abcdef"
OFFLINE_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}

Block = dict[str, Any]
Script = Callable[[dict[str, Any]], list[Block]]


def claude_bin() -> str | None:
    """Claude Code's CLI: $PLANNING_MCP_CLAUDE_SESSION_BIN, else `claude` on PATH."""
    named = os.environ.get(CLAUDE_BIN_ENV)
    if named:
        return named if Path(named).is_file() else None
    return shutil.which("claude")


def claude_missing(why: str) -> NoReturn:
    """A test needs a Claude Code CLI that is not installed: it fails where CI requires the
    CLI ($PLANNING_MCP_REQUIRE_CLAUDE=1), and is skipped elsewhere."""
    if os.environ.get(REQUIRE_CLAUDE_ENV) == "1":
        pytest.fail(why)
    pytest.skip(why)


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def tool_use(name: str, arguments: dict[str, Any], ident: str) -> Block:
    return {"type": "tool_use", "id": ident, "name": name, "input": arguments}


# -- reading a request -------------------------------------------------------------------


def blocks_of(message: dict[str, Any]) -> list[Block]:
    content = message.get("content")
    if isinstance(content, str):
        return [text(content)]
    return [b for b in content or [] if isinstance(b, dict)]


def block_text(block: Block) -> str:
    """A block's text; a tool result's content, joined."""
    if block.get("type") == "text":
        return str(block.get("text", ""))
    if block.get("type") == "tool_result":
        inner = block.get("content")
        if isinstance(inner, str):
            return inner
        return "\n".join(block_text(b) for b in inner or [] if isinstance(b, dict))
    return ""


def tool_results(body: dict[str, Any]) -> list[Block]:
    """Every tool result in the conversation so far, oldest first."""
    return [b for m in body.get("messages", []) for b in blocks_of(m) if b.get("type") == "tool_result"]


def last_user_prompt(body: dict[str, Any]) -> str:
    """The latest user turn's own text (not a tool result, not a system reminder)."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") != "user":
            continue
        said = [block_text(b) for b in blocks_of(message) if b.get("type") == "text"]
        said = [s for s in said if not s.lstrip().startswith("<system-reminder>")]
        if said and not any(b.get("type") == "tool_result" for b in blocks_of(message)):
            return said[-1]
    return ""


def results_since_prompt(body: dict[str, Any]) -> list[Block]:
    """The tool results the model has had since the latest user turn."""
    found: list[Block] = []
    for message in reversed(body.get("messages", [])):
        blocks = blocks_of(message)
        if message.get("role") == "user" and not any(b.get("type") == "tool_result" for b in blocks):
            said = [b for b in blocks if b.get("type") == "text"]
            if any(not block_text(b).lstrip().startswith("<system-reminder>") for b in said):
                break
        found[:0] = [b for b in blocks if b.get("type") == "tool_result"]
    return found


def request_text(body: dict[str, Any]) -> str:
    """Everything the model reads in a request, as one string (for `in` checks)."""
    parts = [json.dumps(body.get("system", ""), ensure_ascii=False)]
    for message in body.get("messages", []):
        parts.extend(block_text(b) for b in blocks_of(message))
    return "\n".join(parts)


def is_main_loop(body: dict[str, Any]) -> bool:
    """The agent's own turn (it offers tools), not one of Claude Code's side requests."""
    return bool(body.get("tools"))


# -- the HTTP server ---------------------------------------------------------------------


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def stream(blocks: list[Block], model: str) -> bytes:
    """The SSE body of one reply holding `blocks`."""
    out = [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_scripted",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            },
        )
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        out.append(_sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


@dataclass
class ScriptedModel:
    """The model on 127.0.0.1:<port>; `requests` holds every main-loop body received."""

    script: Script
    requests: list[dict[str, Any]] = field(default_factory=list)
    side_requests: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answer(self, body: dict[str, Any]) -> list[Block]:
        if not is_main_loop(body):
            self.side_requests.append(body)
            return [text("Scripted session")]
        self.requests.append(body)
        try:
            return self.script(body)
        except Exception as e:  # the test reads it; Claude Code gets a plain reply
            self.errors.append(f"{type(e).__name__}: {e}")
            return [text("The script failed.")]


def _handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self._send(200, b"", "text/plain")

        def do_GET(self) -> None:
            self._send(404, b'{"type":"error","error":{"type":"not_found_error","message":"no"}}', "application/json")

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
            path = self.path.split("?")[0]
            if path.endswith("/count_tokens"):
                reply = json.dumps({"input_tokens": len(raw) // 4}).encode()
                self._send(200, reply, "application/json")
                return
            if not path.endswith("/v1/messages"):
                self._send(
                    404, b'{"type":"error","error":{"type":"not_found_error","message":"no"}}', "application/json"
                )
                return
            blocks = model.answer(body)
            if body.get("stream"):
                self._send(200, stream(blocks, str(body.get("model", "claude"))), "text/event-stream")
                return
            message = {
                "id": "msg_scripted",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "claude"),
                "content": blocks,
                "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
            self._send(200, json.dumps(message).encode(), "application/json")

        def _send(self, status: int, payload: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@contextmanager
def scripted_model(script: Script) -> Iterator[ScriptedModel]:
    model = ScriptedModel(script)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(model))
    server.daemon_threads = True
    model.port = int(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# -- the CLI -----------------------------------------------------------------------------


@dataclass
class ClaudeHome:
    """A throwaway HOME and CLAUDE_CONFIG_DIR in which Claude Code trusts `project`."""

    base: Path
    project: Path
    home: Path = field(init=False)  # base/home
    config: Path = field(init=False)  # base/config

    def __post_init__(self) -> None:
        self.home, self.config = self.base / "home", self.base / "config"

    def prepare(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.config.mkdir(parents=True, exist_ok=True)
        state = {
            "hasCompletedOnboarding": True,
            "customApiKeyResponses": {"approved": [DUMMY_KEY[-20:]], "rejected": []},
            "projects": {str(self.project): {"hasTrustDialogAccepted": True, "allowedTools": []}},
            "bypassPermissionsModeAccepted": True,
        }
        (self.config / ".claude.json").write_text(json.dumps(state))

    def env(self, model: ScriptedModel, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        keep = ("PATH", "LANG", "LC_ALL", "TERM", "PYTHONPATH")
        env = {k: v for k, v in os.environ.items() if k in keep}
        # `planning-mcp` as the documented settings call it: this interpreter's console script.
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        env.update(OFFLINE_ENV)
        env.update(
            HOME=str(self.home),
            CLAUDE_CONFIG_DIR=str(self.config),
            ANTHROPIC_BASE_URL=model.url,
            ANTHROPIC_API_KEY=DUMMY_KEY,
        )
        env.update(extra or {})
        return env


def run_print(
    binary: str,
    home: ClaudeHome,
    model: ScriptedModel,
    prompt: str,
    *,
    args: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`claude -p PROMPT` in the project, to completion (bounded)."""
    return subprocess.run(
        [binary, "-p", prompt, *args],
        cwd=home.project,
        env=home.env(model, env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def tool_names(body: dict[str, Any]) -> set[str]:
    return {str(t.get("name")) for t in body.get("tools", []) if isinstance(t, dict)}


WAIT_FOR_SERVERS = "WaitForMcpServers"
MAX_WAITS = 3
TOOL_SEARCH = "ToolSearch"
NEVER_CONNECTED = "The MCP server never connected."


def reach(name: str, offered: set[str], ident: str) -> Block | None:
    """The call a model makes first when the tool `name` is not offered yet, as Claude
    Code's reminders tell it to: while a server is still connecting Claude Code offers
    WaitForMcpServers, which returns once it has; under tool search (the newer release's
    default) an MCP tool is deferred until fetched by name. None: nothing to do first."""
    if WAIT_FOR_SERVERS in offered or (name.startswith("mcp__") and TOOL_SEARCH not in offered):
        return tool_use(WAIT_FOR_SERVERS, {}, ident)
    if TOOL_SEARCH in offered:
        return tool_use(TOOL_SEARCH, {"query": f"select:{name}", "max_results": 5}, ident)
    return None


@dataclass
class Steps:
    """A script: per user prompt (matched by a word in it), tool calls made one per
    request, then a closing text. Until a tool is offered, the model waits for its server
    or fetches the tool (`reach`), as a model would."""

    turns: dict[str, list[tuple[str, dict[str, Any]]]]

    def __call__(self, body: dict[str, Any]) -> list[Block]:
        prompt = last_user_prompt(body)
        key = next((k for k in self.turns if k in prompt), None)
        if key is None:
            return [text("Nothing scripted for that.")]
        done = [r for r in results_since_prompt(body) if str(r.get("tool_use_id", "")).startswith(f"toolu_{key}_")]
        steps = self.turns[key]
        if len(done) >= len(steps):
            return [text(f"Finished {key}.")]
        name, arguments = steps[len(done)]
        offered = tool_names(body)
        if name not in offered:
            mark = f"toolu_{key}{len(done)}_"
            tries = sum(str(r.get("tool_use_id", "")).startswith(mark) for r in results_since_prompt(body))
            if tries >= MAX_WAITS:  # it never came: end the turn (the test fails on it)
                return [text(NEVER_CONNECTED)]
            first = reach(name, offered, f"{mark}{tries}")
            if first is not None:
                return [first]
        return [tool_use(name, arguments, f"toolu_{key}_{len(done)}")]


DOCS = Path(__file__).resolve().parents[2] / "docs" / "claude-code-hooks.md"


def documented_settings() -> dict[str, Any]:
    """The settings docs/claude-code-hooks.md tells users to put in .claude/settings.json
    (its first JSON block): the tests run Claude Code with exactly those."""
    page = DOCS.read_text(encoding="utf-8")
    block = page.split("```json\n", 1)[1].split("```", 1)[0]
    settings: dict[str, Any] = json.loads(block)
    return settings


def write_project(
    project: Path, root: Path, command: str = "planning-mcp", extra: Mapping[str, Any] | None = None
) -> None:
    """A project using planning-mcp in Claude Code: `.mcp.json` (server "planning" on
    `root`), the documented `.claude/settings.json`, and in `settings.local.json` the
    user's approval of the server and its tools (`extra` replaces the documented keys)."""
    project.mkdir(parents=True, exist_ok=True)
    server = {"type": "stdio", "command": command, "args": ["--root", str(root)]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"planning": server}}))
    (project / ".claude").mkdir(exist_ok=True)
    shared = {**documented_settings(), **(extra or {})}
    (project / ".claude" / "settings.json").write_text(json.dumps(shared, indent=2))
    local = {"enabledMcpjsonServers": ["planning"], "permissions": {"allow": ["mcp__planning"]}}
    (project / ".claude" / "settings.local.json").write_text(json.dumps(local, indent=2))


READY = "← for agents"  # the foot of Claude Code's prompt once the UI waits for input (any mode)


@contextmanager
def interactive(
    binary: str, home: ClaudeHome, model: ScriptedModel, folder: Path, args: tuple[str, ...] = ()
) -> Iterator[Any]:
    """Claude Code's interactive UI under a private tmux, in the project, ready for input."""
    from .terminal import Tmux

    env = home.env(model)
    script = folder / "claude.sh"
    assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    script.write_text(
        f"#!/bin/sh\ncd {shlex.quote(str(home.project))}\n"
        f"exec env -i {assigns} {shlex.quote(binary)} {shlex.join(args)}\n"
    )
    script.chmod(0o755)
    tmux = Tmux(folder / "tmux.sock")
    tmux.start(str(script), width=120, height=40)
    try:
        tmux.wait_for(READY, timeout=60)
        yield tmux
    finally:
        tmux.kill()


def say(tmux: Any, line: str, *, then: str | None = None, gone: str | None = None, timeout: float = 90) -> None:
    """Type `line` into the UI, send it once it shows, and wait until the screen shows
    `then` (or no longer shows `gone`: what a cleared conversation loses)."""
    from .procs import wait_until

    tmux.keys("-l", line)
    tmux.wait_for(line, timeout=20)
    tmux.keys("Enter")
    if then is not None:
        tmux.wait_for(then, timeout=timeout)
    if gone is not None:
        wait_until(lambda: gone not in tmux.screen() and READY in tmux.screen(), f"{gone!r} gone", timeout)
