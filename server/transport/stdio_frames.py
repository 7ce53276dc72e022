"""The lines of our stdio transport (server/transport/stdio.py): bounded framing, an answer for
every line the SDK's parser refuses, and encoding that cannot fail.

The SDK parses each line with pydantic's JSON parser, which refuses more than 200 levels
of nesting and any lone UTF-16 surrogate ("\\ud800" is valid JSON text); its stdio
transport then hands the error to a dispatcher that only logs it, so the client waits
forever. Here such a line gets a JSON-RPC error with the request's id when it can be found:
-32700 for text that is not UTF-8 or not JSON (a number too long to read included, as over
HTTP), -32600 for a line that is too long, too deep or not a JSON-RPC message (an id that is
neither a string nor an integer: answered with id null), -32602 for a lone surrogate in the
params. A line that is not one JSON value (two objects on one line) is not served: each
request on it whose id can be found gets the error, so no client waits for an answer."""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

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
        request_id = outline(self.start.decode("utf-8", "replace")).first_id
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
    """A line that cannot be served, and the errors that answer it (one per request on it)."""

    answers: tuple[types.JSONRPCError, ...]


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


@dataclass
class Outline:
    """What can be told of a line without parsing it (it may be too deep, broken or cut short)."""

    depth: int = 0  # the deepest nesting of objects and arrays
    # The id of each top-level object that has one, in order; None for an id that is not a
    # string or an integer, or an integer too long to read.
    ids: list[RequestId | None] = field(default_factory=list)
    longest_integer: int = 0  # digits

    @property
    def first_id(self) -> RequestId | None:
        return self.ids[0] if self.ids else None


def _id_value(token: str) -> RequestId | None:
    if token.startswith('"'):
        value = json.loads(token)
        return value if isinstance(value, str) else None
    if _INTEGER.fullmatch(token) and not _too_long(token):
        return int(token)
    return None


def _too_long(integer: str) -> bool:
    """More digits than Python (and so json and pydantic) will read as an integer."""
    limit = sys.get_int_max_str_digits()
    return limit > 0 and len(integer.lstrip("-")) > limit


_NO_ID = object()  # the top-level object being read has no "id" member (yet)


def outline(text: str) -> Outline:
    found = Outline()
    depth = 0
    previous = ""
    stage = 0  # 1: the top-level key "id" was read, 2: and its colon
    object_id: object = _NO_ID  # the id of the top-level object being read (the last one, as json reads it)
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token == '"':
            break  # the rest cannot be read reliably
        if stage == 2:
            object_id, stage = _id_value(token), 0
        if token in ("{", "["):
            depth += 1
            found.depth = max(found.depth, depth)
        elif token in ("}", "]"):
            depth -= 1
            if depth == 0 and object_id is not _NO_ID:
                found.ids.append(cast(RequestId | None, object_id))
                object_id = _NO_ID
        elif stage == 0 and _starts_top_level_id(depth, previous, token):
            stage = 1
        elif stage == 1:
            stage = 2 if token == ":" else 0
        elif _INTEGER.fullmatch(token):
            found.longest_integer = max(found.longest_integer, len(token.lstrip("-")))
        previous = token
    if object_id is not _NO_ID:  # an object cut short
        found.ids.append(cast(RequestId | None, object_id))
    return found


def _starts_top_level_id(depth: int, previous: str, token: str) -> bool:
    """`token` is the key "id" of the top-level object (the token before it opened the
    object or ended a member)."""
    return depth == 1 and previous in ("{", ",") and token == '"id"'


def _refuse(request_ids: list[RequestId | None], code: int, message: str) -> Refused:
    """One error for each request (None: a request whose id cannot be read), or one with
    id null when the line holds none that can be found."""
    return Refused(tuple(error(request_id, code, message) for request_id in request_ids or [None]))


def _no_constants(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def diagnose(line: bytes) -> types.JSONRPCMessage | Refused | None:
    """For a line the SDK's parser refused: the errors to answer, or the message itself if
    only that parser minds it, or None for a malformed response (there is nothing to answer)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        ids = outline(line.decode("utf-8", "replace")).ids
        return _refuse(ids, types.PARSE_ERROR, f"Parse error: the line is not UTF-8 text (byte {e.start})")
    shape = outline(text)
    if shape.depth > MAX_NESTING:
        return _refuse(
            shape.ids,
            types.INVALID_REQUEST,
            f"Invalid request: the message nests {shape.depth} levels of objects and arrays; "
            f"at most {MAX_NESTING} are accepted",
        )
    if _too_long("1" * shape.longest_integer):
        limit = sys.get_int_max_str_digits()
        reason = f"Parse error: a number of {shape.longest_integer} digits; at most {limit} digits can be read"
        return _refuse(shape.ids, types.PARSE_ERROR, reason)
    try:
        data = json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data":
            reason = (
                f"Parse error: more than one JSON value on the line (the next at character {e.pos}); one message a line"
            )
            return _refuse(shape.ids, types.PARSE_ERROR, reason)
        return _refuse(shape.ids, types.PARSE_ERROR, f"Parse error: {e}")
    except ValueError as e:
        return _refuse(shape.ids, types.PARSE_ERROR, f"Parse error: {e}")
    return _check_message(data)


def _check_message(data: object) -> types.JSONRPCMessage | Refused | None:
    if not isinstance(data, dict):
        return _refuse([], types.INVALID_REQUEST, "Invalid request: a message is one JSON object (no batches)")
    raw_id = data.get("id")
    request_id = raw_id if _is_request_id(raw_id) else None
    for part, code, what in (
        (data.get("params"), types.INVALID_PARAMS, "Invalid params"),
        (data, types.INVALID_REQUEST, "Invalid request"),
    ):
        try:
            json.dumps(part, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as e:
            char = f"\\u{ord(e.object[e.start]):04x}"
            reason = f"{what}: a string holds {char}, a lone UTF-16 surrogate, which is not a Unicode character"
            return _refuse([request_id], code, reason)
    if (refused := refuse_bad_id(data)) is not None:
        return refused
    try:
        return types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError as e:
        if "method" not in data and ("result" in data or "error" in data):
            log.warning("dropped a malformed response from the client (id %r)", raw_id)
            return None
        reason = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'message'}: {err['msg']}" for err in e.errors()[:3])
        return _refuse([request_id], types.INVALID_REQUEST, f"Invalid request: not a JSON-RPC 2.0 message ({reason})")


def _is_request_id(value: object) -> bool:
    return isinstance(value, int | str) and not isinstance(value, bool)


def refuse_bad_id(data: dict[str, Any]) -> Refused | None:
    """A request (it has a method) whose id is neither a string nor an integer: JSON-RPC's
    Invalid Request, answered with id null (it cannot be echoed). The SDK's parser takes it
    for a notification, which gets no answer, so the client would wait forever."""
    if "method" not in data or "id" not in data or _is_request_id(data["id"]):
        return None
    sent = json.dumps(data["id"], separators=(",", ":"))
    shown = sent if len(sent) <= 40 else sent[:40] + "…"
    return _refuse([None], types.INVALID_REQUEST, f"Invalid request: an id is a string or an integer, not {shown}")


def check_notification(line: bytes) -> Refused | None:
    """A line the SDK's parser read as a notification: refused if it is a request whose id
    that parser dropped (see refuse_bad_id)."""
    try:
        data = json.loads(line, parse_constant=_no_constants)
    except ValueError as e:
        return _refuse_constants(line, e)
    return refuse_bad_id(data) if isinstance(data, dict) else None


def _refuse_constants(line: bytes, why: ValueError) -> Refused | None:
    """NaN and ±Infinity are no JSON, but the SDK's parser reads them: a request whose id
    one of them made a notification is a Parse error, with id null (JSON-RPC), not silence."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None  # what the SDK's parser read and ours cannot: nothing ours to say
    if isinstance(data, dict) and "method" in data and "id" in data:
        return _refuse([None], types.PARSE_ERROR, f"Parse error: {why}")
    return None
