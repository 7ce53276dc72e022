"""docs/architecture.md's list of every module, made from the modules' own docstrings.

    python -m tests.support.module_map          # print the list
    python -m tests.support.module_map --write  # put it into docs/architecture.md

tests/test_architecture_doc.py fails when the list in the document is not the one the code
gives (a module added, moved, gone, or its docstring changed), so the map a reader follows
always names every module there is.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"
PACKAGES = ("planning_core", "server")
START = "<!-- every module: made by `python -m tests.support.module_map --write` -->"
END = "<!-- end of every module -->"


def _summary(path: Path) -> str:
    """The first sentence of the module's docstring, on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(doc.split("\n\n")[0].split())
    sentence = re.split(r"(?<=\.)\s", paragraph, maxsplit=1)[0]
    return sentence.replace("|", "\\|") or "(no docstring)"


def module_list() -> str:
    """The Markdown list: one line per module, by folder."""
    lines = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            if "node_modules" in path.parts:
                continue
            lines.append(f"- `{path.relative_to(REPO).as_posix()}`: {_summary(path)}")
    return "\n".join(lines)


def in_document(text: str) -> str | None:
    """The list as the document has it, None when its markers are missing."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        return None
    return text[start + len(START) : end].strip("\n")


def write() -> None:
    text = DOC.read_text(encoding="utf-8")
    block = f"{START}\n{module_list()}\n{END}"
    if in_document(text) is None:
        text = text.rstrip("\n") + f"\n\n## Every module\n\n{block}\n"
    else:
        text = text[: text.find(START)] + block + text[text.find(END) + len(END) :]
    DOC.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write() if "--write" in sys.argv[1:] else print(module_list())
