"""The lines of our stdio transport (server/stdio.py): bounded framing, an answer for
every line the SDK's parser refuses, and encoding that cannot fail.

The SDK parses each line with pydantic's JSON parser, which refuses more than 200 levels
of nesting and any lone UTF-16 surrogate ("\\ud800" is valid JSON text); its stdio
transport then hands the error to a dispatcher that only logs it, so the client waits
forever. Here such a line gets a JSON-RPC error with the request's id when it can be found:
-32700 for text that is not UTF-8 or not JSON, -32600 for a line that is too long, too deep
or not a JSON-RPC message, -32602 for a lone surrogate in the params."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass

import mcp_types as types
from pydantic import ValidationError

from .http import MAX_REQUEST_BYTES

log = logging.getLogger("planning_mcp")

# The deepest nesting (objects and arrays, the envelope included) the SDK's JSON parser
# accepts; measured on pydantic-core 2.50: 200 parses, 201 is "recursion limit exceeded".
MAX_NESTING = 200
ID_SEARCH_BYTES = 64 * 1024  # how much of an over-long line is kept, to find its id

RequestId = int | str


@dataclass
class TooLong:
    """An over-long line: its length so far and its start (where its id usually is)."""

    start: bytes
    length: int

    def answer(self) -> types.JSONRPCError:
        request_id = outline(self.start.decode("utf-8", "replace"))[1]
        return error(
            request_id,
            types.INVALID_REQUEST,
            f"Invalid request: the line is {self.length} bytes long; one request may be at most "
            f"{MAX_REQUEST_BYTES} bytes ({MAX_REQUEST_BYTES // (1024 * 1024)} MiB)",
        )


class Lines:
    """Newline framing that never holds more than MAX_REQUEST_BYTES of one line: the rest
    of a longer one is counted and dropped as it arrives."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.skipped: TooLong | None = None  # set while an over-long line is being dropped

    def _take(self, piece: bytes) -> None:
        if self.skipped is not None:
            self.skipped.length += len(piece)
        elif len(self.buf) + len(piece) > MAX_REQUEST_BYTES:
            start = bytes(self.buf[:ID_SEARCH_BYTES]) + piece[: max(0, ID_SEARCH_BYTES - len(self.buf))]
            self.skipped = TooLong(start, len(self.buf) + len(piece))
            self.buf.clear()
        else:
            self.buf += piece

    def _cut(self) -> bytes | TooLong:
        line: bytes | TooLong = self.skipped if self.skipped is not None else bytes(self.buf)
        self.skipped = None
        self.buf.clear()
        return line

    def feed(self, chunk: bytes) -> Iterator[bytes | TooLong]:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._take(chunk[start:end])
            yield self._cut()
            start = end + 1
        self._take(chunk[start:])

    def end(self) -> Iterator[bytes | TooLong]:
        """At the end of input: a last line without its newline still counts."""
        if self.buf or self.skipped is not None:
            yield self._cut()


@dataclass(frozen=True)
class Refused:
    """A line that cannot be served, and the error that answers it."""

    answer: types.JSONRPCError


def error(request_id: RequestId | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def encode(message: types.JSONRPCMessage) -> tuple[bytes, RequestId | None]:
    """One line of JSON, and the id of the request it answers if it is an answer."""
    answered = message.id if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) else None
    try:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:
        # A str that is not Unicode (a lone surrogate: an id we echo, a file name that is
        # not UTF-8) cannot be UTF-8, but JSON's \u escapes carry it.
        try:
            text = json.dumps(message.model_dump(by_alias=True, exclude_unset=True, mode="json"))
        except ValueError as e:
            log.warning("could not encode an outgoing message: %s", e)
            if answered is None:
                return b"", None
            reply = error(answered, types.INTERNAL_ERROR, f"Internal error: the answer could not be encoded ({e})")
            text = json.dumps(reply.model_dump(by_alias=True, exclude_unset=True, mode="json"))
    return text.encode() + b"\n", answered


# JSON tokens, strings first so that brackets inside them are not counted; a lone quote
# is a string cut short.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|"|[\[\]{}:,]|[^\s\[\]{}:,"]+')
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")


def outline(text: str) -> tuple[int, RequestId | None]:
    """How deep `text` nests, and the id of its top-level object if it has one, without
    parsing it (it may be too deep, broken or cut short)."""
    depth = deepest = 0
    request_id: RequestId | None = None
    previous = ""
    stage = 0  # 1: the top-level key "id" was read, 2: and its colon
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in ("{", "["):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("}", "]"):
            depth -= 1
        elif token == '"':
            break  # the rest cannot be read reliably
        elif depth == 1 and stage == 0 and previous in ("{", ",") and token == '"id"':
            stage = 1
        elif stage == 1 and token == ":":
            stage = 2
        elif stage == 2 and depth == 1:
            if token.startswith('"'):
                request_id = json.loads(token)
            elif _INTEGER.fullmatch(token):
                request_id = int(token)
        if stage == 2 and token != ":":
            stage = 0
        previous = token
    return deepest, request_id


def _refuse(request_id: RequestId | None, code: int, message: str) -> Refused:
    return Refused(error(request_id, code, message))


def _no_constants(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def diagnose(line: bytes) -> types.JSONRPCMessage | Refused | None:
    """For a line the SDK's parser refused: the error to answer, or the message itself if
    only that parser minds it, or None for a malformed response (there is nothing to answer)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        request_id = outline(line.decode("utf-8", "replace"))[1]
        return _refuse(request_id, types.PARSE_ERROR, f"Parse error: the line is not UTF-8 text (byte {e.start})")
    depth, request_id = outline(text)
    if depth > MAX_NESTING:
        return _refuse(
            request_id,
            types.INVALID_REQUEST,
            f"Invalid request: the message nests {depth} levels of objects and arrays; "
            f"at most {MAX_NESTING} are accepted",
        )
    try:
        data = json.loads(text, parse_constant=_no_constants)
    except ValueError as e:
        return _refuse(request_id, types.PARSE_ERROR, f"Parse error: {e}")
    if not isinstance(data, dict):
        return _refuse(None, types.INVALID_REQUEST, "Invalid request: a message is one JSON object (no batches)")
    raw_id = data.get("id")
    request_id = raw_id if isinstance(raw_id, int | str) and not isinstance(raw_id, bool) else None
    for part, code, what in (
        (data.get("params"), types.INVALID_PARAMS, "Invalid params"),
        (data, types.INVALID_REQUEST, "Invalid request"),
    ):
        try:
            json.dumps(part, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as e:
            char = f"\\u{ord(e.object[e.start]):04x}"
            reason = f"{what}: a string holds {char}, a lone UTF-16 surrogate, which is not a Unicode character"
            return _refuse(request_id, code, reason)
    try:
        return types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError as e:
        if "method" not in data and ("result" in data or "error" in data):
            log.warning("dropped a malformed response from the client (id %r)", raw_id)
            return None
        reason = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'message'}: {err['msg']}" for err in e.errors()[:3])
        return _refuse(request_id, types.INVALID_REQUEST, f"Invalid request: not a JSON-RPC 2.0 message ({reason})")
