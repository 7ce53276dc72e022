"""CI: no function in the product (planning_core, server) over radon's cyclomatic
complexity MAX. Ruff's C90 holds the same bound with mccabe's count; radon also counts each
`and`/`or`, so a condition that grew a clause shows here first. Prints each offender."""

from __future__ import annotations

import sys
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class

MAX = 15  # the same bound as [tool.ruff.lint.mccabe] max-complexity
PACKAGES = ("planning_core", "server")


def offenders(root: Path) -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            found += [
                f"{path.relative_to(root)}:{f.lineno} {f.fullname} {f.complexity}"
                for f in cc_visit(path.read_text(encoding="utf-8"))
                if not isinstance(f, Class) and f.complexity > MAX  # a class's methods come as functions too
            ]
    return found


def main() -> int:
    found = offenders(Path(__file__).resolve().parent.parent)
    for line in found:
        print(line, file=sys.stderr)
    if found:
        print(f"{len(found)} function(s) over radon's cyclomatic complexity {MAX}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
