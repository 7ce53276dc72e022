"""Plan names, slugs, dates and task ids: everything that may end up in a path.

A value from a tool call reaches the file system only after passing one of these.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Callable, Sequence

from .errors import (
    MAX_SLUG,
    AmbiguousPlan,
    InvalidInput,
    InvalidPlanName,
    InvalidSlug,
    InvalidTaskId,
    PlanExists,
    PlanNotFound,
)

PLAN_DATE_LENGTH = len("YYYY-MM-DD")  # a plan's name begins with its date
MAX_PLAN_NAME = PLAN_DATE_LENGTH + 1 + MAX_SLUG
MAX_TASK_ID = 999_999_999  # task_<N>.json names have at most 9 digits
_SLUG = re.compile(rf"[a-z0-9](?:[a-z0-9-]{{0,{MAX_SLUG - 2}}}[a-z0-9])?")
_PLAN_NAME = re.compile(rf"(\d{{4}}-\d{{2}}-\d{{2}})-([a-z0-9-]{{1,{MAX_SLUG}}})")
_PLAN_PART = re.compile(rf"[a-z0-9-]{{1,{MAX_PLAN_NAME}}}")
_TASK_ID = re.compile(r"#?\s*(\d{1,9})")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
FALLBACK_SLUG = "plan"
MAX_SUFFIX = 999  # the last -N PlanCreate tries for a plan name before PlanExists


def _ascii(text: str) -> str:
    """Letters, marks and digits transliterated to ASCII (Ü -> U, ß -> ss, 添 -> Tian);
    anything else (punctuation, emoji, spaces) becomes a space, i.e. a word break."""
    out = []
    for c in unicodedata.normalize("NFC", text):
        if c.isascii():
            out.append(c)
            continue
        if unicodedata.category(c)[0] not in "LMN":
            out.append(" ")
            continue
        # Imported here, at the first letter outside ASCII: names.py is on the path of
        # every Claude Code hook call, which never makes a slug.
        from anyascii import anyascii

        latin = anyascii(c)
        # Scripts without spaces between words (Chinese, Korean syllables) come out as
        # capitalised syllables: keep each one a word, so 添加 reads tian-jia, not tianjia.
        if unicodedata.category(c) == "Lo" and latin[:1].isupper():
            latin = f" {latin} "
        out.append(latin)
    return "".join(out)


def slugify(text: str) -> str:
    """The slug PlanCreate derives from a title: transliterated to ASCII, lowercase letters
    and digits, every other run '-', at most MAX_SLUG characters (cut at a word break
    where there is one). A title with nothing to transliterate (only emoji or punctuation)
    gives plan-<6 hex of its hash>, so two such plans stay distinguishable."""
    slug = _NOT_SLUG.sub("-", _ascii(text).lower()).strip("-")
    if len(slug) > MAX_SLUG:
        cut = slug[: MAX_SLUG + 1]
        # Cut at the last word break unless that loses more than half of the slug.
        slug = cut[: cut.rindex("-")] if cut.rfind("-") > MAX_SLUG // 2 else slug[:MAX_SLUG]
        slug = slug.strip("-")
    if slug:
        return slug
    import hashlib  # here: the Claude Code hook loads this module at every call and never slugs

    digest = hashlib.sha256(unicodedata.normalize("NFC", text.strip()).encode()).hexdigest()
    return f"{FALLBACK_SLUG}-{digest[:6]}"


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


def match_plan(wanted: str, active: Callable[[], Sequence[str]], archived: Callable[[], Sequence[str]]) -> str:
    """The one rule for naming a plan, used by the tools and the CLI alike.

    A full plan name is taken as it is (the store then says whether it exists). Anything
    else is a part of a name: among the active plans first, then the archived ones, the
    one plan whose name ends with `-<part>`, else the one that contains it; several
    matches are refused with the candidates listed. Only names from the listings are
    ever returned, so a part never reaches a path. The listings are callables, asked only
    when a part must be matched: a full name (what agents send) costs no folder listing."""
    if not isinstance(wanted, str) or not _PLAN_PART.fullmatch(wanted):
        raise InvalidPlanName(wanted if isinstance(wanted, str) else repr(wanted))
    if _PLAN_NAME.fullmatch(wanted):
        try:
            return check_plan_name(wanted)
        except InvalidPlanName:
            pass  # date-shaped but not a real date: it can still be a part of a name
    for pool in (active, archived):
        names = pool()
        for hit in (lambda n: n.endswith(f"-{wanted}"), lambda n: wanted in n):
            hits = [n for n in names if hit(n)]
            if len(hits) == 1:
                return hits[0]
            if hits:
                raise AmbiguousPlan(wanted, hits)
    raise PlanNotFound(wanted, active())


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


def plan_title(plan_md: str, name: str) -> str:
    """A plan's title, the one rule for every store: plan.md's first line when it is a
    `# ` heading (at most 1,000 characters of it), else the plan's name."""
    first = plan_md.partition("\n")[0][:1000]
    return first[2:].strip() if first.startswith("# ") else name


def plan_name(date: str, slug: str, n: int = 1) -> str:
    """The n-th name PlanCreate tries for a plan (`<date>-<slug>`, then -2, -3, ... with
    the slug shortened so it stays within MAX_SLUG characters): one rule for every store."""
    if n == 1:
        return f"{date}-{slug}"
    tail = f"-{n}"
    return f"{date}-{slug[: MAX_SLUG - len(tail)].rstrip('-')}{tail}"


def claim_plan_name(date: str, slug: str, claim: Callable[[str], bool]) -> str:
    """The first of `<date>-<slug>`, -2, ... -MAX_SUFFIX (plan_name) that `claim` takes
    (True: the store now holds the plan under that name; False: the name is taken), for
    every store's create_plan. Raises PlanExists when every name is taken."""
    for n in range(1, MAX_SUFFIX + 1):
        name = plan_name(date, slug, n)
        if claim(name):
            return name
    raise PlanExists(f"{date}-{slug}")
