"""The checks of a value a caller sends, below the models: a text's bound, its one-line
rule and "must not be empty"; metadata's size, depth and numbers. Each refusal is an
InvalidInput whose message says how to fix the call. (validate.py holds the checks that
need the models.)"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from . import safetext
from .errors import InvalidInput

# A criterion that names a check (`check:tests`) is one the server verifies by running that
# check's command from the check file (planning_core/verify.py); any other is a sentence the
# person or agent verifies.
CHECK_PREFIX = "check:"
CHECK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

MAX_METADATA_BYTES = 16 * 1024
# Deeper metadata is no real record, and each level widens the indented task file.
MAX_METADATA_DEPTH = 20
# The fields that may span lines (safetext states the rule); every other text is one line.
MULTI_LINE_FIELDS = frozenset({"description", "analysis", "approach", "approved plan", "note"})


def empty_text(field: str) -> str:
    """The one message for a required text sent empty or blank."""
    return f"{field} must not be empty."


def text(value: Any, field: str, limit: int, *, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string.")
    if len(value) > limit:
        raise InvalidInput(f"{field} is {len(value):,} characters; the limit is {limit:,}. Shorten it.")
    if required and not value.strip():
        raise InvalidInput(empty_text(field))
    checked: str = value.strip() if required else value
    reason = safetext.problem(checked, field, multiline=field in MULTI_LINE_FIELDS)
    if reason:
        raise InvalidInput(reason + " Nothing was changed.")
    return checked


def metadata_size(metadata: dict[str, Any]) -> int:
    return len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")).encode())


def metadata(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput("metadata must be an object (JSON dictionary).")
    _finite(value, "metadata", 0)
    if metadata_size(value) > MAX_METADATA_BYTES:
        raise InvalidInput(f"metadata is larger than {MAX_METADATA_BYTES // 1024} KB; store less in it.")
    return value


def merged_metadata(kept: dict[str, Any], sent: dict[str, Any]) -> dict[str, Any]:
    """`sent` merged into `kept`: a key sent as None is removed."""
    merged = {**kept, **sent}
    out = {k: v for k, v in merged.items() if v is not None}
    if metadata_size(out) > MAX_METADATA_BYTES:
        raise InvalidInput(f"metadata would exceed {MAX_METADATA_BYTES // 1024} KB; store less.")
    return out


def _finite(value: Any, where: str, depth: int) -> None:
    """NaN and infinities have no JSON form: stored they would become null, which in an
    update means "remove this key". Refuse them, naming where they are."""
    if depth > MAX_METADATA_DEPTH:
        raise InvalidInput(f"{where} is nested more than {MAX_METADATA_DEPTH} levels deep; flatten it.")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(
            f"{where} is {value!r}, which JSON cannot store (it would be saved as null, which "
            "removes the key). Send a finite number, or the value as a string. Nothing was changed."
        )
    if isinstance(value, dict):
        for k, v in value.items():
            _finite(v, f"{where}.{safetext.escape(str(k))}", depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _finite(v, f"{where}[{i}]", depth + 1)
