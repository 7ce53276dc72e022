"""The size caps of what a model reads on every turn (tools/list) and what a user reads first
(README.md): each a base and an explicit allowance for every field a caller sets
(models.SETTABLE), so a new field's growth is budgeted instead of a surprise failure. Today's
fields leave tools/list and the README the caps they always had (6,000 characters; 12,000
bytes); a field that needs more than its allowance says so by shortening its texts."""

from __future__ import annotations

from planning_core.models import SETTABLE

# A field is a parameter of TaskCreate and TaskUpdate and, mostly, of PlanCreate's tasks:
# `"estimate":{"type":"integer"},` three times (90 characters) and short descriptions. Bounds in
# the schema cost about 30 characters a tool more: the field's check enforces them anyway.
TOOLS_LIST_PER_FIELD = 150
TOOLS_LIST_BASE = 6_000 - 10 * TOOLS_LIST_PER_FIELD  # ten fields when the cap was set
# Its name in the README's TaskCreate and TaskUpdate rows and PlanCreate's tasks, and a note.
README_PER_FIELD = 80
README_BASE = 12_000 - 10 * README_PER_FIELD


def tools_list_cap() -> int:
    """Characters a tools/list answer's tools may take (bench.peers.tools_list_size)."""
    return TOOLS_LIST_BASE + TOOLS_LIST_PER_FIELD * len(SETTABLE)


def readme_cap() -> int:
    """Bytes README.md may take."""
    return README_BASE + README_PER_FIELD * len(SETTABLE)
