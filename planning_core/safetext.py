"""The one rule for control characters in text, and the one way to print such text.

The rule (checked on tool input, see validate.text and the models' validators):

- one-line fields (subjects, titles, owners, activeForm, plan steps, todo content and
  topic) hold no control character at all: no C0 (tab and line feed included), no DEL,
  no C1, no U+2028/U+2029 line and paragraph separators, no bidirectional overrides.
  A line break in a subject would forge lines of TaskList (`#99 [completed] ...`) or a
  `<reminder>`; an ESC would reach the terminals of `status`, `board` and `watch`.
- multi-line fields (description, analysis, approach) may hold line feeds and tabs, and
  nothing else of the above (a carriage return rewrites the line it is printed on).

Files are hand-editable, so what they hold is not checked input: everything printed
to a terminal or rendered for an agent goes through escape(), which shows each such
character as a visible `\\xNN` / `\\uNNNN` instead of sending it.
"""

from __future__ import annotations

import re

_BIDI = "\u202a-\u202e\u2066-\u2069"  # embeddings, overrides, isolates: reorder what is shown
_ONE_LINE_BAD = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
_MULTI_LINE_BAD = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
# What json.dumps(ensure_ascii=False) leaves raw that a terminal may act on (it escapes C0).
_JSON_RAW = re.compile(f"[\x7f-\x9f\u2028\u2029{_BIDI}]")
_NAMES = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab", "\x1b": "an escape (ESC)", "\x00": "NUL"}


def _code(ch: str) -> str:
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def problem(value: str, field: str, *, multiline: bool = False) -> str | None:
    """Why `value` may not be stored in `field` (an actionable sentence), or None."""
    m = (_MULTI_LINE_BAD if multiline else _ONE_LINE_BAD).search(value)
    if m is None:
        return None
    ch = m.group()
    what = _NAMES.get(ch, f"the control character U+{ord(ch):04X}")
    if multiline:
        return (
            f"{field} contains {what} at position {m.start() + 1}; it may hold line breaks (\\n) "
            "and tabs but no other control characters. Remove it and retry."
        )
    return (
        f"{field} contains {what} at position {m.start() + 1}; {field} is a single line of plain "
        "text (no line breaks, tabs or control characters). Remove it and retry"
        + (" (put longer text in the description)." if ch in "\n\r" and field == "subject" else ".")
    )


def escape(text: str, *, multiline: bool = False) -> str:
    """`text` safe to print: each character the rule refuses becomes visible `\\xNN`."""
    return (_MULTI_LINE_BAD if multiline else _ONE_LINE_BAD).sub(lambda m: _code(m.group()), text)


def escape_json(text: str) -> str:
    """JSON text from json.dumps(ensure_ascii=False), safe to print: the characters it
    leaves raw (DEL, C1, separators, bidi controls) become \\uNNNN escapes, which
    JSON readers decode back to the same value. Other non-ASCII text stays readable."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
