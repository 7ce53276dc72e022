"""Plan names, slugs, dates and task ids: everything that may end up in a path.

A value from a tool call reaches the file system only after passing one of these.
"""

from __future__ import annotations

import datetime as dt
import re

from .errors import InvalidInput, InvalidPlanName, InvalidSlug, InvalidTaskId

MAX_SLUG = 60
MAX_TASK_ID = 999_999_999  # task_<N>.json names have at most 9 digits
_SLUG = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,58}[a-z0-9])?")
_PLAN_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})-([a-z0-9-]{1,60})")
_TASK_ID = re.compile(r"#?\s*(\d{1,9})")


def slugify(text: str) -> str:
    """Lowercase ASCII letters and digits; every other run becomes '-'; 'plan' if empty."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    slug = slug[:MAX_SLUG].strip("-")
    return slug or "plan"


def check_slug(slug: str) -> str:
    if not isinstance(slug, str) or len(slug) > MAX_SLUG or not _SLUG.fullmatch(slug):
        raise InvalidSlug(str(slug))
    return slug


def check_date(value: str) -> str:
    try:
        parsed = dt.date.fromisoformat(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"Invalid date {value!r}: use YYYY-MM-DD, or leave date out for today.") from None
    if parsed.isoformat() != value:
        raise InvalidInput(f"Invalid date {value!r}: use YYYY-MM-DD, or leave date out for today.")
    return value


def check_plan_name(name: str) -> str:
    """A plan's folder name: YYYY-MM-DD-<slug>. Anything else never reaches a path."""
    if not isinstance(name, str):
        raise InvalidPlanName(repr(name))
    m = _PLAN_NAME.fullmatch(name)
    if not m:
        raise InvalidPlanName(name)
    try:
        check_date(m.group(1))
        check_slug(m.group(2))
    except InvalidInput:
        raise InvalidPlanName(name) from None
    return name


def parse_task_id(value: object) -> int:
    """Accept 3, "3" and "#3"."""
    if isinstance(value, bool):
        raise InvalidTaskId(value)
    if isinstance(value, int):
        if 1 <= value <= MAX_TASK_ID:
            return value
        raise InvalidTaskId(value if value.bit_length() < 64 else "a number too large")
    if isinstance(value, str):
        m = _TASK_ID.fullmatch(value.strip())
        if m and int(m.group(1)) >= 1:
            return int(m.group(1))
    raise InvalidTaskId(value)


def parse_task_ids(values: object) -> list[int]:
    if values is None:
        return []
    if isinstance(values, (str, int)):
        values = [values]
    if not isinstance(values, list):
        raise InvalidTaskId(values)
    out: list[int] = []
    for v in values:
        i = parse_task_id(v)
        if i not in out:
            out.append(i)
    return out


def today() -> str:
    return dt.date.today().isoformat()
