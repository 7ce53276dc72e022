"""A task's row: the one shape a task is shown in, everywhere a list of tasks is shown.

`task_row` makes it (TaskList's rows, kept by pages.py; TaskCreate's task); `board_row`
is the same row as the board shows it (`board --json`, `status --json`, the web board
and the MCP App, all through server/board/data.py): each of the row's fields shown even
when empty, then the task's dependencies as stored and its open blockers.

The row's fields are TaskRow's. Each one is the task's field of the same name, except
the two the row works out from the plan (COMPUTED): so a field added to both Task and
TaskRow shows in every row, and on every board, with no other change.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic_core import to_jsonable_python

from ..models import RULES, Task
from ..outcomes import TaskRow

# Every row gives the same fields: one set shared by all (pydantic keeps one per model, 0.5 KB).
ROW_FIELDS = frozenset(TaskRow.model_fields)
# Worked out from the plan, not copied: open blockers (blocked_by: the ones not completed)
# and whether an in-progress task's lease ran out (another owner may take it).
COMPUTED = ("blocked_by", "claimable")
# Copied from the task, in the row's order.
COPIED = tuple(name for name in TaskRow.model_fields if name not in COMPUTED)
# The board's row: the row's copied fields, then these of the task's as stored (in the order
# its rows have always had), then every other field the card shows (its rule's `board`).
_BOARD_FIRST = ("active_form", "blocked_by", "blocks", "acceptance", "verification", "notes")
BOARD_TASK_FIELDS = _BOARD_FIRST + tuple(
    name for name, rule in RULES.items() if rule.board and name not in _BOARD_FIRST and name not in COPIED
)
BOARD_OPEN_BLOCKERS = "openBlockers"

_missing = [name for name in (*COPIED, *BOARD_TASK_FIELDS) if name not in Task.model_fields]
if _missing:  # a row field with nothing to copy it from: said at import, never a silent blank
    raise TypeError(f"TaskRow fields {_missing} are not Task fields: add them to COMPUTED or to Task")


def _alias(model: type[Task] | type[TaskRow], name: str) -> str:
    return model.model_fields[name].alias or name


_COPIED_ALIASES = tuple((name, _alias(TaskRow, name)) for name in COPIED)
_BOARD_ALIASES = tuple((name, _alias(Task, name)) for name in BOARD_TASK_FIELDS)


def _value(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def task_row(task: Task, open_blockers: list[int], claimable: bool = False) -> TaskRow:
    """The task's row. From a task already validated: built without validating again."""
    copied = {name: _value(getattr(task, name)) for name in COPIED}
    return TaskRow.model_construct(
        _fields_set=ROW_FIELDS,  # type: ignore[arg-type]  # read, never added to
        blocked_by=open_blockers,
        claimable=claimable,
        **copied,
    )


def board_row(task: Task, open_blockers: list[int]) -> dict[str, Any]:
    """The task's row as the board shows it (JSON values, camelCase keys)."""
    row = task_row(task, open_blockers)
    out = {alias: to_jsonable_python(getattr(row, name)) for name, alias in _COPIED_ALIASES}
    out |= {alias: to_jsonable_python(getattr(task, name)) for name, alias in _BOARD_ALIASES}
    out[BOARD_OPEN_BLOCKERS] = open_blockers
    return out
