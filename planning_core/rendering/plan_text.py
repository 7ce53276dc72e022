"""A plan written in markdown (as Claude Code's plan mode writes it) read as tasks.

The steps are the plan's numbered items (`1.`, `2)`) or, when it has none, its checkbox
items (`- [ ]`), at the shallowest indentation they appear: lists under several headings
follow each other. What is indented under a step (sub-bullets, code blocks, text) is that
step's description. Lines inside fenced code blocks are never steps. Each step is blocked
by the one before unless it says otherwise: `(parallel)` / `(independent)` for none,
`(after 1, 3)` for those steps. A plan with no such list is one task.

A step's acceptance criteria are the checkbox items indented under it (`   - [ ] returns
401 on a bad password`) and its `Acceptance: <sentence>` lines; they leave its description
for the task's `acceptance` (`check:<name>` among them names a check to run).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .. import safetext
from ..models import MAX_CRITERIA, MAX_CRITERION, MAX_SUBJECT

NUMBERED = re.compile(r"^(\s*)\d+[.)]\s+(.*)$")
CHECKBOX = re.compile(r"^(\s*)[-*+]\s+\[[ xX]\]\s+(.*)$")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
NO_BLOCKER = re.compile(r"\((?:parallel|independent|no dependencies)\)", re.IGNORECASE)
AFTER = re.compile(r"\(after (?:steps? )?([\d,\s and]+)\)", re.IGNORECASE)
EMPHASIS = re.compile(r"(\*\*|__|`)")
CRITERION = re.compile(r"^\s*(?:[-*+]\s+\[[ xX]\]|(?:[-*+]\s+)?(?:\*\*|__)?Acceptance:(?:\*\*|__)?)\s+(\S.*)$")
DEFAULT_TITLE = "Approved plan"


@dataclass
class Step:
    subject: str
    description: list[str] = field(default_factory=list)
    blocked_by: list[int] = field(default_factory=list)  # 1-based positions
    acceptance: list[str] = field(default_factory=list)


@dataclass
class PlanText:
    title: str
    steps: list[Step]


def _code_lines(lines: list[str]) -> set[int]:
    inside, found = False, set()
    for n, line in enumerate(lines):
        if FENCE.match(line):
            found.add(n)
            inside = not inside
        elif inside:
            found.add(n)
    return found


def _items(lines: list[str], code: set[int], pattern: re.Pattern[str]) -> list[tuple[int, int, str]]:
    """(line number, indent, text) of the shallowest items matching `pattern`."""
    hits = [(n, m) for n, line in enumerate(lines) if n not in code and (m := pattern.match(line))]
    if not hits:
        return []
    depth = min(len(m.group(1).expandtabs(4)) for _, m in hits)
    return [(n, depth, m.group(2)) for n, m in hits if len(m.group(1).expandtabs(4)) == depth]


def _subject(raw: str) -> str:
    text = EMPHASIS.sub("", raw).strip().rstrip(":").strip()
    text = NO_BLOCKER.sub("", AFTER.sub("", text)).strip()
    return (text[: MAX_SUBJECT - 1] + "…") if len(text) > MAX_SUBJECT else text or "Step"


def _blockers(raw: str, position: int) -> list[int]:
    if NO_BLOCKER.search(raw):
        return []
    after = AFTER.search(raw)
    if after:
        return [int(n) for n in re.findall(r"\d+", after.group(1)) if 0 < int(n) < position]
    return [position - 1] if position > 1 else []


def _body(lines: list[str], start: int, end: int, depth: int, code: set[int]) -> list[str]:
    """The lines under an item (more indented, or code), up to the next item or heading."""
    body: list[str] = []
    for n in range(start, end):
        line = lines[n]
        if n not in code and line.strip() and (HEADING.match(line) or len(line) - len(line.lstrip()) <= depth):
            break
        body.append(line)
    while body and not body[-1].strip():
        body.pop()
    return body


def title_of(lines: list[str], code: set[int]) -> str:
    for n, line in enumerate(lines):
        if n not in code and (m := HEADING.match(line)):
            return _subject(m.group(1))
    first = next((line.strip() for n, line in enumerate(lines) if n not in code and line.strip()), "")
    return _subject(first) if first else DEFAULT_TITLE


def read_plan(markdown: str) -> PlanText:
    """The plan's title (its first heading) and its steps, in order."""
    lines = markdown.splitlines()
    code = _code_lines(lines)
    title = title_of(lines, code)
    items = _items(lines, code, NUMBERED) or _items(lines, code, CHECKBOX)
    if not items:
        return PlanText(title, [Step(title, [markdown.strip()])])
    steps = []
    for position, (n, depth, raw) in enumerate(items, start=1):
        end = items[position][0] if position < len(items) else len(lines)
        body = _body(lines, n + 1, end, depth, code)
        description, acceptance = _criteria(body, code, n + 1)
        steps.append(Step(_subject(raw), _dedent(description), _blockers(raw, position), acceptance))
    return PlanText(title, steps)


def _dedent(body: list[str]) -> list[str]:
    widths = [len(line) - len(line.lstrip()) for line in body if line.strip()]
    cut = min(widths) if widths else 0
    return [line[cut:] for line in body]


def _criteria(body: list[str], code: set[int], first: int) -> tuple[list[str], list[str]]:
    """A step's body split into its description and its acceptance criteria (at most
    MAX_CRITERIA, each a line the criteria's text rule takes; any other stays description)."""
    description: list[str] = []
    found: list[str] = []
    for n, line in enumerate(body, start=first):
        m = None if n in code or len(found) >= MAX_CRITERIA else CRITERION.match(line)
        text = m.group(1).strip() if m else ""
        if m and len(text) <= MAX_CRITERION and not safetext.problem(text, "acceptance"):
            found.append(text)
        else:
            description.append(line)
    while description and not description[-1].strip():
        description.pop()
    return description, list(dict.fromkeys(found))
