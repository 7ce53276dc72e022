"""The data the planner keeps: tasks, plans, todo items, and their bounds."""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from . import checks, gates, safetext
from .checks import CHECK_NAME as CHECK_NAME
from .checks import CHECK_PREFIX as CHECK_PREFIX
from .checks import MAX_METADATA_BYTES as MAX_METADATA_BYTES
from .checks import metadata_size as metadata_size
from .errors import InvalidInput
from .names import parse_task_id
from .taskjson import MAX_PRIORITY as MAX_PRIORITY
from .taskjson import PRIORITY_BOUNDS as PRIORITY_BOUNDS
from .taskjson import TaskStatus as TaskStatus
from .taskjson import is_priority as is_priority
from .taskjson import tally

MAX_SUBJECT = 200
MAX_DESCRIPTION = 20_000
MAX_SHORT_TEXT = 200  # activeForm, owner, titles
MAX_PLAN_TEXT = 100_000  # analysis / approach in plan.md
MAX_TODO_ITEMS = 12
MAX_PLAN_TASKS = 500  # tasks in one PlanCreate call
MAX_EDGES = 1_000  # ids in one dependency list


# The statuses, once: a task's and a todo item's; what TaskUpdate may set (deleted removes
# the task); what TaskList may filter on (ready and blocked are derived: graph.py).
StatusName = Literal["pending", "in_progress", "completed"]
UpdateStatus = Literal[StatusName, "deleted"]
ListStatus = Literal[StatusName, "ready", "blocked"]
STATUS_NAMES: tuple[str, ...] = get_args(StatusName)
UPDATE_STATUSES: tuple[str, ...] = get_args(UpdateStatus)
LIST_STATUSES: tuple[str, ...] = get_args(ListStatus)
TodoStatus = StatusName


TaskIdsArg = Sequence[int | str]


def problem_line(where: str, message: str) -> str:
    """One field's problem as every refusal of malformed input quotes it: `<where>: <message>`
    (pydantic's own message; the SDK's argument errors are shortened to the same form)."""
    return f"{where}: {message}"


def first_problem(e: ValidationError) -> str:
    first = e.errors()[0]
    return problem_line(".".join(str(p) for p in first["loc"]), first["msg"])


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


def _plain(value: str, field: str, *, multiline: bool = False) -> str:
    """The control-character rule (safetext) as a pydantic check."""
    reason = safetext.problem(value, field, multiline=multiline)
    if reason:
        raise ValueError(reason)
    return value


# -- how a caller sets a task's fields ---------------------------------------------------------


@dataclass(frozen=True)
class FieldRule:
    """How a caller sets one of Task's fields, stated once on the field itself
    (`Annotated[<type>, FieldRule(...)]`). Everything else is derived from these: PlanCreate's
    task (TaskSpec), TaskCreate's task (NewTask), TaskUpdate's patch (TaskPatch), what
    TaskUpdate checks and applies and names in its answer (TRACKED, by the wire name: the
    field's alias), TaskCreate's and TaskUpdate's parameters (`create_parameter`,
    `update_parameter`), and the board's row (`board`). A field of Task with no rule is not
    the caller's to set.

    check: the value as TaskCreate or TaskUpdate sent it (None: not sent) -> the value kept,
        or InvalidInput naming the field by `wire`. None for a field with rules of its own,
        applied by update.py and the planner (status, dependencies, the lease).
    in_plan: its form in PlanCreate's tasks (an Annotated type carrying its pydantic Field),
        or None when PlanCreate's tasks do not take it.
    merge: how TaskUpdate combines the kept value with the checked one (metadata's keys);
        None: the new value replaces the old.
    by_claim: set by the claim rules after the status (owner), not with the other fields.
    tool: the type TaskCreate's and TaskUpdate's parameter takes (its JSON schema in
        tools/list); `bounds` its pydantic bounds (ge, le), in both tools unless `clear` lowers
        TaskUpdate's.
    about: the parameter's description in TaskCreate (tools/list is read every turn: short).
    clear: TaskUpdate's value that removes it (None: the natural empty value does); TaskUpdate's
        description says `<clear> clears`, and a whole-number clear is its lower bound.
    changes: TaskUpdate's description when it is not about `clear` (metadata's keys).
    sent_default: TaskCreate's default when the field is not sent (None: optional, null
        accepted; REQUIRED: the tool requires it).
    board: the board's card shows it (server/board/assets/board.js, one line); the board's row
        carries it (TaskRow's fields, else rows.BOARD_TASK_FIELDS), and
        tests/board/test_board_fields.py fails while board.js does not read it."""

    check: Callable[[Any, str], Any] | None = None
    in_plan: Any = None
    merge: Callable[[Any, Any], Any] | None = None
    by_claim: bool = False
    tool: Any = None
    bounds: tuple[int | None, int | None] | None = None
    about: str | None = None
    clear: int | str | None = None
    changes: str | None = None
    sent_default: Any = None
    board: bool = False

    def create_parameter(self) -> tuple[Any, Any]:
        """TaskCreate's parameter for the field: (annotation, default; REQUIRED: none)."""
        tool = bounded(self.tool, self.bounds)
        tool = tool if self.sent_default is not None else _optional(tool)
        return Annotated[tool, Field(description=self.about)], self.sent_default

    def update_parameter(self) -> tuple[Any, Any]:
        """TaskUpdate's parameter for the field (null or absent: left as it is)."""
        bounds = self.bounds
        if type(self.clear) is int:  # the clear value is its lowest
            bounds = (self.clear, bounds[1] if bounds else None)
        tool = bounded(self.tool, bounds)
        about = self.changes or (f"{json.dumps(self.clear)} clears" if self.clear is not None else None)
        return Annotated[_optional(tool), Field(description=about)], None


def bounded(tool: Any, bounds: tuple[int | None, int | None] | None) -> Any:
    """`tool` between the bounds (low, high; None: unbounded), both included."""
    return Annotated[tool, Field(ge=bounds[0], le=bounds[1])] if bounds else tool


# TaskCreate's `sent_default` for a field the tool requires.
REQUIRED: Any = Ellipsis


def _optional(tool: Any) -> Any:
    """`tool | None`; Any as it is (it takes null already)."""
    return tool if tool is Any else tool | None


def _plan_text(required: bool) -> Callable[[str, ValidationInfo], str]:
    """The text rule of `checks.text` as a pydantic check (pydantic checks the bound): one
    line unless the field may span lines; a required text not blank, and stripped."""

    def check(value: str, info: ValidationInfo) -> str:
        field = to_camel(info.field_name or "text")
        if required:
            if not value.strip():
                raise ValueError(checks.empty_text(field))
            value = value.strip()
        reason = safetext.problem(value, field, multiline=field in checks.MULTI_LINE_FIELDS)
        if reason:
            raise ValueError(reason)
        return value

    return check


def text_rule(
    limit: int,
    *,
    required: bool = False,
    in_plan: bool = True,
    by_claim: bool = False,
    about: str | None = None,
    sent_default: str | None = None,
    board: bool = False,
) -> FieldRule:
    """A text of at most `limit` characters (`required`: not empty, and TaskCreate requires it)."""
    plan_field = Field(min_length=1, max_length=limit) if required else Field(default="", max_length=limit)
    return FieldRule(
        check=lambda value, wire: checks.text(value, wire, limit, required=required),
        in_plan=Annotated[str, plan_field, AfterValidator(_plan_text(required))] if in_plan else None,
        by_claim=by_claim,
        tool=str,
        about=about,
        sent_default=REQUIRED if required else sent_default,
        board=board,
    )


METADATA_RULE = FieldRule(
    check=lambda value, wire: checks.metadata(value),
    merge=checks.merged_metadata,
    tool=dict[str, Any],
    changes="null removes a key",
)


# -- priority, labels, parent ---------------------------------------------------------------

CLEAR_PRIORITY = -1  # TaskUpdate's priority that removes it (null means "not sent")
MAX_LABELS = 10  # labels on one task
MAX_LABEL = 32  # characters in one label
NO_PARENT = 0  # TaskUpdate's parent that removes it (no task has id 0)


def check_priority(value: Any, field: str) -> int | None:
    """0 (the most urgent) to MAX_PRIORITY; CLEAR_PRIORITY (or nothing) for none."""
    if value is None or (value == CLEAR_PRIORITY and type(value) is int):
        return None
    if not is_priority(value):
        raise InvalidInput(
            f"{field} must be a whole number from {PRIORITY_BOUNDS[0]} (the most urgent) to {PRIORITY_BOUNDS[1]}, "
            f"or {CLEAR_PRIORITY} to remove it. Nothing was changed."
        )
    return value


def label_problem(label: Any, where: str) -> str | None:
    """Why `label` is not one: a label is one word of at most MAX_LABEL characters (no
    space or comma: the board shows labels as `{a,b}`), under the one-line text rule."""
    if not isinstance(label, str):
        return f"{where} must be a string."
    if not label or len(label) > MAX_LABEL or any(c.isspace() or c in ",{}" for c in label):
        return (
            f"{where} {safetext.escape(label)!r} is not a label: 1-{MAX_LABEL} characters, no spaces, commas or braces."
        )
    return safetext.problem(label, where)


def _unique(value: list[Any]) -> list[Any]:
    """Each item once, in the order given."""
    return list(dict.fromkeys(value))


def _checked_list(
    value: Any, field: str, kind: str, noun: str, most: int, problem: Callable[[Any, str], str | None]
) -> list[Any]:
    """A list field's value checked as a whole and item by item ([] for nothing): the one
    rule of labels and acceptance, whose refusals differ only in these words."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInput(f"{field} must be a list of {kind}. Nothing was changed.")
    if len(value) > most:
        raise InvalidInput(f"{field} lists {len(value)} {noun}; at most {most}. Nothing was changed.")
    reason = items_problem(value, field, problem)
    if reason:
        raise InvalidInput(reason + " Nothing was changed.")
    return value


def check_labels(value: Any, field: str) -> list[str]:
    """A task's labels, each once, in the order given; [] (or nothing) for none."""
    return _unique(_checked_list(value, field, 'labels, e.g. ["ui", "bug"]', "labels", MAX_LABELS, label_problem))


def items_problem(values: list[Any], field: str, problem: Callable[[Any, str], str | None]) -> str | None:
    """The first item's problem in a list field (`<field>[<i>]`: `problem`'s), or None: the one
    walk of a list for TaskCreate, TaskUpdate and PlanCreate's tasks alike."""
    return next((r for i, item in enumerate(values) if (r := problem(item, f"{field}[{i}]"))), None)


def plan_items(
    problem: Callable[[Any, str], str | None], kept: Callable[[list[Any]], list[Any]]
) -> Callable[[list[Any], ValidationInfo], list[Any]]:
    """A list field's item rule as a pydantic check for PlanCreate's tasks (pydantic checks the
    count): the same problem as TaskCreate's, the same values kept."""

    def check(value: list[Any], info: ValidationInfo) -> list[Any]:
        reason = items_problem(value, to_camel(info.field_name or "items"), problem)
        if reason:
            raise ValueError(reason)
        return kept(value)

    return check


def check_parent(value: Any, field: str) -> int | None:
    """A task id; NO_PARENT (or nothing) for none. That it names another task of the plan,
    and no task its own ancestor, is checked against the plan (update.check_parent, in the plan)."""
    if value is None or (value == NO_PARENT and type(value) is int):
        return None
    return parse_task_id(value)


PRIORITY_RULE = FieldRule(
    check=check_priority,
    in_plan=Annotated[bounded(StrictInt, PRIORITY_BOUNDS) | None, Field(default=None)],
    tool=StrictInt,
    bounds=PRIORITY_BOUNDS,
    about="0 most urgent",
    clear=CLEAR_PRIORITY,
    board=True,
)


def list_rule(
    check: Callable[[Any, str], list[Any]],
    problem: Callable[[Any, str], str | None],
    kept: Callable[[list[Any]], list[Any]],
    most: int,
    item: Any,
    tool_item: Any,
) -> FieldRule:
    """The rule of a list field the board shows: `check` for TaskCreate and TaskUpdate; in
    PlanCreate's tasks a list of `item` (at most `most`), each checked by `problem`, `kept` what
    is kept; the tools' parameter a list of `tool_item`."""
    return FieldRule(
        check=check,
        in_plan=Annotated[
            list[item],
            Field(default_factory=list, max_length=most),
            AfterValidator(plan_items(problem, kept)),
        ],
        tool=list[tool_item],
        board=True,
    )


LABELS_RULE = list_rule(check_labels, label_problem, _unique, MAX_LABELS, str, StrictStr)
# In PlanCreate's tasks parent is a 1-based position in that list, like blockedBy.
PARENT_RULE = FieldRule(
    check=check_parent,
    in_plan=Annotated[StrictInt | None, Field(default=None)],
    tool=StrictInt,
    clear=NO_PARENT,
    board=True,
)


def _plan_gate(value: Any, info: ValidationInfo) -> Any:
    """gates.check_gate as a pydantic check."""
    try:
        return gates.check_gate(value, to_camel(info.field_name or "gate"))
    except InvalidInput as e:
        raise ValueError(str(e)) from None


GATE_RULE = FieldRule(
    check=gates.check_gate,
    in_plan=Annotated[Any, Field(default=None), AfterValidator(_plan_gate)],
    tool=Any,
    about=f'"{gates.HUMAN}" or {{"{gates.AFTER}": ISO time}}',
    clear=gates.CLEAR_GATE,
    board=True,
)
# In PlanCreate's tasks blockedBy lists 1-based positions in that list. Strict: lax mode turns
# `true` into position 1 and `1.0` into 1; neither is a position.
BLOCKED_BY_RULE = FieldRule(in_plan=Annotated[list[StrictInt], Field(default_factory=list, max_length=MAX_PLAN_TASKS)])


# -- acceptance criteria ------------------------------------------------------------------

MAX_CRITERIA = 20  # acceptance criteria on one task
MAX_CRITERION = MAX_SUBJECT  # characters in one: a short sentence


def criterion_problem(value: Any, where: str) -> str | None:
    """Why `value` is not an acceptance criterion: a non-empty line of at most MAX_CRITERION
    characters, under the one-line text rule."""
    if not isinstance(value, str):
        return f"{where} must be a string."
    if not value.strip() or len(value) > MAX_CRITERION:
        return f"{where} must be a sentence of 1-{MAX_CRITERION} characters."
    return safetext.problem(value, where)


def check_acceptance(value: Any, field: str) -> list[str]:
    """A task's acceptance criteria, each once, stripped, in the order given; [] (or nothing)
    for none."""
    kept = _checked_list(
        value, field, 'short sentences, e.g. ["returns 401"]', "criteria", MAX_CRITERIA, criterion_problem
    )
    return _criteria_kept(kept)


def _criteria_kept(value: list[str]) -> list[str]:
    """Each criterion once, stripped, in the order given."""
    return list(dict.fromkeys(item.strip() for item in value))


def check_named(criterion: str) -> str | None:
    """The check a criterion names (`check:tests` -> "tests"), or None for a sentence."""
    if not criterion.startswith(CHECK_PREFIX):
        return None
    name = criterion[len(CHECK_PREFIX) :].strip()
    return name if CHECK_NAME.fullmatch(name) else None


def named_checks(acceptance: Iterable[str]) -> list[str]:
    """The checks a task's criteria name, each once, in order."""
    return list(dict.fromkeys(n for c in acceptance if (n := check_named(c)) is not None))


# Items untyped in the schema (tools/list is read every turn): each is checked here.
ACCEPTANCE_RULE = list_rule(check_acceptance, criterion_problem, _criteria_kept, MAX_CRITERIA, Any, Any)


# -- handoff notes ----------------------------------------------------------------------

MAX_NOTE = 2_000  # characters in one note
MAX_NOTES = 200  # notes a task keeps: one more is refused, never an older one dropped
# Appended one at a time by TaskUpdate's `note` (update.apply_note), each {by, at, text};
# never replaced, removed or sent whole: no check of the generic kind.
NOTES_RULE = FieldRule(board=True)


# What Task.kept() shares between the tasks a cache keeps (thousands, never changed).
_NO_IDS: list[Any] = []
_NO_METADATA: dict[str, Any] = {}
_NO_EXTRA: dict[str, Any] = {}
_FIELD_SETS: dict[frozenset[str], set[str]] = {}
MAX_FIELD_SETS = 64  # distinct sets of fields given; files with stray extra fields may make more
_SHARED_TEXTS = ("owner", "created_at", "updated_at", "lease_expires_at")  # the same in many tasks
MAX_SHARED_TEXT = 64


class Task(_Camel):
    """One task file. Unknown fields found on disk are kept and written back."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    id: int = Field(ge=1)
    subject: Annotated[str, text_rule(MAX_SUBJECT, required=True)]
    description: Annotated[str, text_rule(MAX_DESCRIPTION, sent_default="")] = ""
    status: TaskStatus = TaskStatus.PENDING
    blocked_by: Annotated[list[int], BLOCKED_BY_RULE] = Field(default_factory=list)
    blocks: list[int] = Field(default_factory=list)
    owner: Annotated[str, text_rule(MAX_SHORT_TEXT, in_plan=False, by_claim=True, board=True)] = ""
    active_form: Annotated[str, text_rule(MAX_SHORT_TEXT, about="e.g. 'Running tests'", board=True)] = ""
    metadata: Annotated[dict[str, Any], METADATA_RULE] = Field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""
    # A claim's lease (TaskUpdate leaseSeconds; the rules are update.py's): its length, and
    # when it runs out, in UTC like createdAt. Left out of the file when there is none, so a
    # task without a lease is stored exactly as before, by every store.
    lease_seconds: int = Field(default=0, exclude_if=lambda v: not v)
    lease_expires_at: str = Field(default="", exclude_if=lambda v: not v)
    # Each left out of the file when it has none, like the lease: priority 0 (the most urgent)
    # to 4, none ranked after 2; labels; the task this one is a part of (its parent).
    priority: Annotated[int | None, PRIORITY_RULE] = Field(
        default=None, ge=PRIORITY_BOUNDS[0], le=PRIORITY_BOUNDS[1], exclude_if=lambda v: v is None
    )
    labels: Annotated[list[str], LABELS_RULE] = Field(default_factory=list, exclude_if=lambda v: not v)
    parent: Annotated[int | None, PARENT_RULE] = Field(default=None, ge=1, exclude_if=lambda v: v is None)
    # What the task waits for that no agent can do (gates.py): "human" or {"after": time}.
    gate: Annotated[str | dict[str, str] | None, GATE_RULE] = Field(default=None, exclude_if=lambda v: v is None)
    # Short sentences that say when the task is done; `check:<name>` ones are run (verify.py).
    acceptance: Annotated[list[str], ACCEPTANCE_RULE] = Field(default_factory=list, exclude_if=lambda v: not v)
    # Handoff notes, oldest first: {by, at, text} each, appended and never replaced.
    notes: Annotated[list[dict[str, str]], NOTES_RULE] = Field(default_factory=list, exclude_if=lambda v: not v)
    # The server's record of the last run of the checks the criteria name (verification.py):
    # never a caller's to set.
    verification: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None)

    def clone(self) -> Task:
        """A copy the caller may change freely, made without pydantic's generic copy
        (which dominated reading big plans): the fields are already valid, only the
        containers need copying."""
        c = Task.__new__(Task)
        fields = dict(self.__dict__)
        for name, value in fields.items():  # every container field, whatever fields the model grows
            if type(value) is list:
                fields[name] = list(value)  # lists of ids: flat
            elif type(value) is dict:
                fields[name] = copy.deepcopy(value) if value else {}
        object.__setattr__(c, "__dict__", fields)
        object.__setattr__(c, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        extra = self.__pydantic_extra__
        # A new empty dict too: a kept task's empty one is shared (kept()).
        object.__setattr__(
            c, "__pydantic_extra__", copy.deepcopy(extra) if extra else {} if extra is not None else None
        )
        object.__setattr__(c, "__pydantic_private__", None)
        return c

    def kept(self) -> Task:
        """This task, made smaller for a cache that keeps thousands of tasks and never changes
        one (its callers clone() first): the empty lists and dicts and the set of fields given
        are shared between kept tasks, and owner and timestamps (often the same text in many
        tasks: PlanCreate stamps all its tasks alike) are interned. About 1.2 KB less per task
        (of about 2.4). Changing a kept task in place would change the others: clone() it."""
        fields = self.__dict__
        for name in _LIST_FIELDS:
            if not fields[name]:
                fields[name] = _NO_IDS
        if not fields["metadata"]:
            fields["metadata"] = _NO_METADATA
        for name in _SHARED_TEXTS:
            text = fields[name]
            if type(text) is str and len(text) <= MAX_SHARED_TEXT:
                fields[name] = sys.intern(text)
        if self.__pydantic_extra__ == {}:
            object.__setattr__(self, "__pydantic_extra__", _NO_EXTRA)
        given = frozenset(self.__pydantic_fields_set__)
        shared = _FIELD_SETS.get(given)
        if shared is None and len(_FIELD_SETS) < MAX_FIELD_SETS:
            shared = _FIELD_SETS[given] = set(given)
        if shared is not None:
            object.__setattr__(self, "__pydantic_fields_set__", shared)
        return self

    def to_json(self) -> str:
        # pydantic's serializer writes what json.dumps(..., ensure_ascii=False, indent=2) wrote
        # (tests/core/test_task_json.py), ten times faster: every write pays it per task.
        return self.model_dump_json(by_alias=True, indent=2) + "\n"


# Task's fields that are lists: kept() shares their empty ones.
_LIST_FIELDS = tuple(name for name, f in Task.model_fields.items() if f.default_factory is list)
# A task's identity, its timestamps, and what the server records of its checks.
UNTRACKED = ("id", "created_at", "updated_at", "verification")
# The order TaskUpdate's answer names changed fields in, and PlanCreate's task lists its fields
# in, as they always have; every later field follows these, in Task's order.
_NAMED_ORDER = (
    "subject",
    "description",
    "active_form",
    "status",
    "owner",
    "blocked_by",
    "blocks",
    "metadata",
    "lease_seconds",
    "lease_expires_at",
)
# Every field of a task a TaskUpdate may change, in the order its answer names them: all of
# Task's fields but its identity and timestamps.
TRACKED: tuple[str, ...] = _NAMED_ORDER + tuple(
    name for name in Task.model_fields if name not in _NAMED_ORDER and name not in UNTRACKED
)
# Each tracked field's name on the wire (its alias): what tools take and answers name.
WIRE: dict[str, str] = {name: Task.model_fields[name].alias or name for name in TRACKED}
_FROM_WIRE = {**{wire: name for name, wire in WIRE.items()}, **{name: name for name in WIRE}}


def _rule(field: FieldInfo) -> FieldRule | None:
    return next((m for m in field.metadata if isinstance(m, FieldRule)), None)


RULES: dict[str, FieldRule] = {n: r for n in TRACKED if (r := _rule(Task.model_fields[n])) is not None}
# The fields TaskCreate and TaskUpdate set from the value sent, each by its rule's check.
SETTABLE: dict[str, FieldRule] = {name: rule for name, rule in RULES.items() if rule.check is not None}


class _PlanTask(_Camel):
    """A task given inside PlanCreate: dependencies are 1-based positions in that list."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


if TYPE_CHECKING:

    class TaskSpec(_PlanTask):
        """(As the type checker sees it: its fields are made from Task's rules below.)"""

        def __getattr__(self, name: str) -> Any: ...

else:
    TaskSpec = create_model(
        "TaskSpec",
        __base__=_PlanTask,
        __doc__=_PlanTask.__doc__,
        __module__=__name__,
        **{name: rule.in_plan for name, rule in RULES.items() if rule.in_plan is not None},
    )


def settable_values(given: dict[str, Any]) -> dict[str, Any]:
    """The values sent for SETTABLE fields (named as on Task or on the wire) by their name on
    Task, in TRACKED order, leaving out those not sent (None). TypeError for any other name:
    a field a caller cannot set is never dropped without a word."""
    values: dict[str, Any] = {}
    for key, value in given.items():
        name = _FROM_WIRE.get(key)
        if name not in SETTABLE:
            raise TypeError(f"{key!r} is not a field a caller sets (known: {', '.join(SETTABLE)})")
        if value is not None:
            values[name] = value
    return {name: values[name] for name in SETTABLE if name in values}


class NewTask:
    """TaskCreate's task: built once by the tool and passed through the actions to
    Planner.create_task. `values`: the SETTABLE fields sent (settable_values), as the caller
    sent them; the planner checks each before it opens the plan."""

    def __init__(
        self,
        subject: Any = None,
        description: Any = None,
        *,
        blocked_by: TaskIdsArg | None = None,
        blocks: TaskIdsArg | None = None,
        **fields: Any,
    ) -> None:
        self.values = settable_values({"subject": subject, "description": description, **fields})
        self.blocked_by = blocked_by
        self.blocks = blocks

    @classmethod
    def of(cls, new: NewTask | str | None, description: str, fields: dict[str, Any]) -> NewTask:
        """`new` itself, or one made of a subject (positional or in `fields`), a description
        and the other fields by name: the planner's and the actions' shorter call forms."""
        if isinstance(new, NewTask):
            return new
        if new is not None:
            fields = {**fields, "subject": new}
        return cls(description=description, **fields)


class TaskPatch:
    """TaskUpdate's changes: built once by the tool and passed through the actions to
    Planner.update_task. `values`: the SETTABLE fields sent (settable_values); None leaves
    a field as it is. Values are as the caller sent them; the planner checks each
    (update.checked) before it reads a file."""

    def __init__(
        self,
        *,
        status: str | None = None,
        add_blocked_by: TaskIdsArg | None = None,
        add_blocks: TaskIdsArg | None = None,
        remove_blocked_by: TaskIdsArg | None = None,
        remove_blocks: TaskIdsArg | None = None,
        lease_seconds: int | None = None,  # a claim's lease (update.py: the claim rules)
        label: str | None = None,  # the label the task a claim of "next" takes carries
        note: str | None = None,  # a handoff note to append (NOTES_RULE)
        **fields: Any,
    ) -> None:
        self.status = status
        self.add_blocked_by = add_blocked_by
        self.add_blocks = add_blocks
        self.remove_blocked_by = remove_blocked_by
        self.remove_blocks = remove_blocks
        self.lease_seconds = lease_seconds
        self.label = label
        self.note = note
        self.values = settable_values(fields)

    def get(self, name: str) -> Any:
        """The value sent for a SETTABLE field, or None."""
        return self.values.get(name)


class TodoItem(_Camel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    content: str = Field(min_length=1, max_length=MAX_SUBJECT)
    status: TodoStatus = "pending"
    active_form: str = Field(default="", max_length=MAX_SHORT_TEXT)

    @field_validator("content", "active_form")
    @classmethod
    def _one_line(cls, v: str, info: ValidationInfo) -> str:
        return _plain(v, to_camel(info.field_name or "text"))


class CorruptFile(_Camel):
    """A task file that could not be read; reported, never rewritten."""

    task_id: int
    file: str
    reason: str


class Progress(_Camel):
    total: int = 0
    completed: int = 0
    in_progress: int = 0
    pending: int = 0

    @property
    def finished(self) -> bool:
        """Every task completed (a plan with no task yet is not finished: it is beginning)."""
        return bool(self.total) and self.completed == self.total


class PlanSummary(_Camel):
    """One line of PlanList / the Active Plans block."""

    name: str
    title: str
    archived: bool = False
    progress: Progress
    current: str | None = Field(default=None, description="subject of the lowest-numbered in_progress task")
    current_id: int | None = None
    unreadable: int = 0


class PlanSnapshot(_Camel):
    """Everything readable in one plan folder at one moment."""

    name: str
    title: str
    archived: bool = False
    tasks: dict[int, Task] = Field(default_factory=dict)
    corrupt: list[CorruptFile] = Field(default_factory=list)
    # Set by a store on a snapshot nobody may change (FileStore.view): its summary, made once.
    _kept_summary: PlanSummary | None = PrivateAttr(default=None)

    def keep_summary(self, summary: PlanSummary | None = None) -> None:
        """Keep `summary` (by default: made now) for every later summary() of this snapshot."""
        self._kept_summary = summary or self.summary()

    def progress(self) -> Progress:
        return summarize(self.name, self.title, self.archived, self.tasks.values(), len(self.corrupt)).progress

    def current(self) -> Task | None:
        running = [t for t in self.tasks.values() if t.status is TaskStatus.IN_PROGRESS]
        return min(running, key=lambda t: t.id) if running else None

    def summary(self) -> PlanSummary:
        if self._kept_summary is not None:
            return self._kept_summary
        return summarize(self.name, self.title, self.archived, self.tasks.values(), len(self.corrupt))


def summarize(name: str, title: str, archived: bool, tasks: Iterable[Task], unreadable: int) -> PlanSummary:
    """Progress and the current task (the lowest-numbered in progress) of a plan."""
    total, completed, in_progress, current = tally(tasks)
    return summary_of(name, title, archived, total, completed, current, in_progress, unreadable)


def summary_of(
    name: str,
    title: str,
    archived: bool,
    total: int,
    completed: int,
    current: Task | None,
    in_progress: int,
    unreadable: int,
) -> PlanSummary:
    """A plan's summary from its counts (`total`: readable tasks) and its current task."""
    p = Progress(
        total=total + unreadable,
        completed=completed,
        in_progress=in_progress,
        pending=total - completed - in_progress,
    )
    return PlanSummary(
        name=name,
        title=title,
        archived=archived,
        progress=p,
        current=current.subject if current else None,
        current_id=current.id if current else None,
        unreadable=unreadable,
    )
