"""The tools: typed signatures, a description for the model, one call into the core.

Core refusals (PlanningError) become tool errors with the core's message, here
in `_answer` and nowhere else.
"""

import difflib
import inspect
from collections.abc import Callable
from typing import Annotated, Any

import anyio.from_thread
import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, StrictInt, StrictStr

from planning_core import PlanningError, TaskSpec, TodoItem, outcomes
from planning_core.actions import Actions, Outcome
from planning_core.caller import Caller
from planning_core.models import (
    MAX_TODO_ITEMS,
    REQUIRED,
    SETTABLE,
    WIRE,
    FieldRule,
    ListStatus,
    NewTask,
    TaskPatch,
    UpdateStatus,
    problem_line,
)
from planning_core.queries import DEFAULT_PAGE, MAX_PAGE
from planning_core.taskgraph.ranking import NEXT_TASK

from . import approval, claim_wait, sdk
from .review import review as plan_review
from .state import AppState, app_state

# Strict: in lax mode pydantic turns `true` into 1 before the core sees it, so
# `taskId: true` acted on task #1. Booleans (and floats) are not ids anywhere.
TaskId = Annotated[StrictInt | StrictStr, Field(description='3 or "#3"')]
ClaimTaskId = Annotated[StrictInt | StrictStr, Field(description=f'"{NEXT_TASK}": best ready (label/parent)')]
TaskIds = list[StrictInt | StrictStr]
PlanName = Annotated[str | None, Field(description="default: current")]

# Only hints that differ from the protocol's defaults (not read-only, destructive, not
# idempotent) are sent; openWorldHint is left out to keep tools/list small.
READ = ToolAnnotations(read_only_hint=True)
WRITE = ToolAnnotations(destructive_hint=False)
UPDATE = ToolAnnotations(idempotent_hint=True)


async def _answer(
    ctx: Context, call: Callable[[Actions, Caller], Outcome[Any]], *, inline: bool = False
) -> CallToolResult:
    state = app_state(ctx)
    caller = state.caller(ctx.request_context)
    try:
        if inline:
            # Memory only (todo): cheaper than the ~0.15 ms hop to a thread. Nothing that
            # touches a file runs here: one FIFO or huge file would stall every session.
            outcome = call(state.actions, caller)
        else:
            # File reads, lock waits and scans of whole plans run off the event loop, so
            # one slow file, writer or big plan never stalls the other sessions.
            outcome = await anyio.to_thread.run_sync(call, state.actions, caller)
    except PlanningError as e:
        return CallToolResult(content=[TextContent(type="text", text=str(e))], is_error=True)
    return CallToolResult(
        content=[TextContent(type="text", text=outcome.text)],
        structured_content=outcome.structured(),
    )


def _progress(ctx: Context) -> Callable[[float, float, str], None]:
    """Progress notifications from the worker thread a tool runs in (sent only when the
    client gave a progressToken)."""

    def send(done: float, total: float, message: str) -> None:
        anyio.from_thread.run(ctx.report_progress, done, total, message)

    return send


async def _answer_seen(
    ctx: Context, call: Callable[[Actions, Caller], Outcome[Any]]
) -> tuple[CallToolResult, PlanningError | None]:
    """`_answer`, and the refusal the call raised, if any (a claim that waits reads it)."""
    seen: list[PlanningError] = []

    def run(actions: Actions, caller: Caller) -> Outcome[Any]:
        try:
            return call(actions, caller)
        except PlanningError as e:
            seen.append(e)
            raise

    result = await _answer(ctx, run)
    return result, seen[0] if seen else None


async def _task_update(ctx: Context, task_id: Any, plan: str | None, patch: TaskPatch, wait: Any) -> CallToolResult:
    """TaskUpdate: the change; a claim that waits (claim_wait.py); a completion of a task
    gated for a person, asked of the client's user where it can (approval.py)."""

    def call(a: Actions, s: Caller) -> Outcome[outcomes.TaskUpdated]:
        return a.task_update(s, task_id, plan, patch, progress=_progress(ctx))

    if wait is not None:
        return await claim_wait.claim(ctx, lambda: _answer_seen(ctx, call), wait, task_id)
    result = await _answer(ctx, call)
    if result.is_error and patch.status == "completed":
        asked = await approval.asked_person(ctx, task_id, plan)  # a task gated for a person
        if asked:
            result = await _answer(ctx, lambda a, s: a.approve(s, task_id, plan))
        if asked is not None:
            said = approval.APPROVED if asked else approval.NOT_APPROVED
            result.content.append(TextContent(type="text", text=said))
    return result


def invalid_arguments(tool: str, problems: list[str]) -> str:
    """The one text of every refusal of a tool's arguments, one problem a field."""
    return f"Invalid arguments for {tool}: " + "; ".join(problems) + ". Fix them and call again."


class ArgumentNames:
    """Refuses a tool call that names an argument the tool does not take, before it runs, with
    the nearest name the tool does take: the SDK ignores unknown arguments, so a misspelled
    `stauts` made TaskUpdate answer "nothing changed" and a misspelled `ownr` claimed a task
    for nobody. Checked here rather than by `additionalProperties: false` in each input
    schema, which would cost tools/list about 30 characters a tool. (Inside a task of
    PlanCreate or an item of todo, pydantic refuses unknown fields; `unknown_field` adds the
    nearest name to its answer.)"""

    def __init__(self) -> None:
        self._schemas: dict[str, dict[str, Any]] = {}

    def read(self, server: MCPServer[Any]) -> None:
        """Once every tool is registered (and its schema compacted)."""
        self._schemas = {tool.name: tool.parameters for tool in sdk.registered_tools(server)}

    def problems(self, tool: str, arguments: Any) -> list[str]:
        """One line for each unknown argument, and for each required one missing that no
        unknown one seems meant for (so one answer says all that is wrong)."""
        schema = self._schemas.get(tool)
        if schema is None or not isinstance(arguments, dict):
            return []  # the SDK answers an unknown tool or arguments that are not an object
        names = list(schema.get("properties", {}))
        unknown = [key for key in arguments if key not in names]
        if not unknown:
            return []
        meant = {key: _nearest(key, names) for key in unknown}
        problems = [_unknown_line(key, "argument", meant[key], names) for key in unknown]
        guessed = set(meant.values())
        required = schema.get("required", [])
        problems += [
            problem_line(name, "Field required") for name in required if name not in arguments and name not in guessed
        ]
        return problems

    def unknown_field(self, tool: str, where: str) -> str:
        """The problem line for a field pydantic refused as unknown inside an argument, e.g.
        `tasks.0.descripton`: the names known at that place, from the tool's schema."""
        node: Any = self._schemas.get(tool, {})
        *path, key = where.split(".")
        for part in path:
            node = node.get("items", {}) if part.isdigit() else node.get("properties", {}).get(part, {})
        names = list(node.get("properties", {}))
        return _unknown_line(where, "field", _nearest(key, names), names)

    async def refuse_unknown(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Middleware: the refusal is a tool error, like any other refusal of arguments."""
        if ctx.method == "tools/call":
            params = ctx.params or {}
            tool = str(params.get("name"))
            problems = self.problems(tool, params.get("arguments"))
            if problems:
                refusal = CallToolResult(
                    content=[TextContent(type="text", text=invalid_arguments(tool, problems))], is_error=True
                )
                return refusal.model_dump(by_alias=True, mode="json", exclude_none=True)
        return await call_next(ctx)


def _unknown_line(where: str, what: str, nearest: str | None, names: list[str]) -> str:
    if nearest:
        return problem_line(where, f"unknown {what} (did you mean {nearest}?)")
    return problem_line(where, f"unknown {what} (known: {', '.join(names)})" if names else f"unknown {what}")


def _nearest(key: str, names: list[str]) -> str | None:
    """The known name `key` most likely misspells (case and underscores aside: task_id -> taskId)."""
    folded = {name.lower().replace("_", ""): name for name in names}
    found = difflib.get_close_matches(key.lower().replace("_", ""), list(folded), n=1)
    return folded[found[0]] if found else None


def _compact(schema: Any, *, output: bool = False, names: bool = False) -> Any:
    """Shrink pydantic's schemas without changing what they accept: tools/list is read
    by the model on every turn. Drops generated titles, `X | None` unions (optional
    parameters may simply be left out), null defaults, and, in output schemas, defaults
    and model docstrings."""
    if isinstance(schema, list):
        return [_compact(v, output=output) for v in schema]
    if not isinstance(schema, dict):
        return schema
    if names:  # keys are property or definition names, not schema keywords
        return {k: _compact(v, output=output) for k, v in schema.items()}
    schema = _plain_types(schema)
    if output and "$ref" in schema:
        # Output schemas stay one level deep: nested objects are described by the text.
        schema = {"type": "object", **{k: v for k, v in schema.items() if k != "$ref"}}
    out: dict[str, Any] = {
        key: _compact(value, output=output, names=key in ("properties", "$defs"))
        for key, value in schema.items()
        if not _dropped(key, value, output)
    }
    if "properties" in out:
        out.pop("description", None)  # a model's docstring; the tool description says it
    if output and _object_items(out):
        # Clients check structured content against the schema; naming the item type of
        # a 1,000-row list costs them ~12 ms per TaskList and tells them nothing.
        del out["items"]
    return out


def _object_items(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "array" and schema.get("items") == {"type": "object"}


def _plain_types(schema: dict[str, Any]) -> dict[str, Any]:
    """`X | None` as X (an optional parameter may be left out), and a union of bare types
    as one list of types."""
    any_of = schema.get("anyOf")
    if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of:
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        schema = {**next(v for v in any_of if v != {"type": "null"}), **rest}
        any_of = schema.get("anyOf")
    if isinstance(any_of, list) and all(isinstance(v, dict) and list(v) == ["type"] for v in any_of):
        schema = {"type": [v["type"] for v in any_of], **{k: v for k, v in schema.items() if k != "anyOf"}}
    return schema


def _dropped(key: str, value: Any, output: bool) -> bool:
    """A schema keyword _compact leaves out."""
    if key == "title" and isinstance(value, str):
        return True
    if key == "default" and (output or value in (None, "", False)):
        return True
    if key in ("required", "$defs") and output:
        return True
    if key == "items" and value == {}:  # any item: the default
        return True
    # additionalProperties: the default; minLength 1: implied by `required`. Lengths are the
    # server's to enforce (its refusal names the bound), as for the tools' own text
    # parameters, which never carried them. The server still enforces each.
    return key in ("additionalProperties", "maxLength", "maxItems") or (key == "minLength" and value == 1)


def _inline_defs(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/$defs/") and ref[8:] in defs:
                return resolve(defs[ref[8:]])
            return {k: resolve(v) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    return dict(resolve(schema))


def _output_names(schema: dict[str, Any]) -> dict[str, Any]:
    """An output schema as the names of its fields: the text answer is what a model reads
    (Claude Code is sent no output schema at all), and each field's type cost tools/list
    about 500 characters."""
    return {**schema, "properties": {name: {} for name in schema.get("properties", {})}}


def compact_schemas(server: MCPServer[AppState]) -> None:
    for tool in sdk.registered_tools(server):
        tool.parameters = _compact(_inline_defs(tool.parameters))
        tool.description = " ".join((tool.description or "").split())
        if tool.output_schema is not None:
            sdk.replace_output_schema(tool, _output_names(_compact(tool.output_schema, output=True)))
            sdk.trust_structured_output(tool)


def _parameter(name: str, annotation: Any, default: Any = None) -> inspect.Parameter:
    """A keyword parameter of a tool (REQUIRED: no default)."""
    default = inspect.Parameter.empty if default is REQUIRED else default
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def _with_fields(
    lead: list[inspect.Parameter],
    field: Callable[[FieldRule], tuple[Any, Any]],
    before: dict[str, list[inspect.Parameter]],
    tail: list[inspect.Parameter],
) -> list[inspect.Parameter]:
    """A tool's parameters: `lead`, one for each field a caller sets (its rule's form, by its
    wire name, in Task's order; each list of `before` goes before the field it names), `tail`.
    A field added to Task with a rule becomes a parameter of both tools with no edit here."""
    out = list(lead)
    for name, rule in SETTABLE.items():
        out += before.get(WIRE[name], [])
        out.append(_parameter(WIRE[name], *field(rule)))
    return out + tail


# TaskCreate's and TaskUpdate's own parameters, in the places tools/list has always named them.
_EDGE_CHANGES = ("addBlockedBy", "addBlocks", "removeBlockedBy", "removeBlocks")
_CREATE_PARAMETERS = _with_fields(
    [],
    FieldRule.create_parameter,
    {"owner": [_parameter("blockedBy", TaskIds | None), _parameter("blocks", TaskIds | None)]},
    [_parameter("plan", PlanName)],
)
_UPDATE_PARAMETERS = _with_fields(
    [_parameter("taskId", ClaimTaskId, REQUIRED), _parameter("status", UpdateStatus | None)],
    FieldRule.update_parameter,
    {
        "metadata": [_parameter(edge, TaskIds | None) for edge in _EDGE_CHANGES],
        # 1 to MAX_LEASE_SECONDS: the core says so when not
        "priority": [_parameter("leaseSeconds", StrictInt | None)],
    },
    [
        _parameter("label", str | None),
        _parameter("note", str | None),
        _parameter("waitSeconds", StrictInt | None),  # 1 to update.MAX_WAIT_SECONDS, with "next"
        _parameter("plan", PlanName),
    ],
)
_UPDATE_OWN = [p.name for p in _UPDATE_PARAMETERS if p.name not in {WIRE[n] for n in SETTABLE}]


def register(server: MCPServer[AppState]) -> None:
    @server.tool(name="PlanCreate", annotations=WRITE)
    async def plan_create(
        title: str,
        analysis: str,
        approach: str,
        ctx: Context,
        steps: list[str] | None = None,
        name: Annotated[str | None, Field(description="slug [a-z0-9-]")] = None,
        date: Annotated[str | None, Field(description="YYYY-MM-DD")] = None,
        tasks: Annotated[list[TaskSpec] | None, Field(description="blockedBy, parent: 1-based positions here")] = None,
        review: Annotated[bool, Field(description="user approves first")] = False,
    ) -> Annotated[CallToolResult, outcomes.PlanCreated]:
        """Create a plan (plan.md + tasks) for work of 3+ steps; it becomes current."""
        verdict = await plan_review(ctx, title, approach, steps, tasks) if review else None
        if verdict is not None and not verdict.write:
            return CallToolResult(content=[TextContent(type="text", text=verdict.note)], is_error=True)
        result = await _answer(
            ctx,
            lambda a, s: a.plan_create(
                s, title, analysis=analysis, approach=approach, steps=steps, name=name, date=date, tasks=tasks
            ),
        )
        if verdict is not None and not result.is_error:
            result.content.append(TextContent(type="text", text=verdict.note))
        return result

    @server.tool(name="PlanList", annotations=READ)
    async def plan_list(ctx: Context, includeDone: bool = False) -> Annotated[CallToolResult, outcomes.PlanListed]:
        """List plans: progress and current task."""
        return await _answer(ctx, lambda a, s: a.plan_list(s, includeDone))

    @server.tool(name="PlanArchive", annotations=UPDATE)
    async def plan_archive(
        ctx: Context, plan: PlanName = None, force: bool = False
    ) -> Annotated[CallToolResult, outcomes.PlanArchivedResult]:
        """Move a finished plan to done/ (force: even unfinished)."""
        return await _answer(ctx, lambda a, s: a.plan_archive(s, plan, force))

    async def task_create(ctx: Context, **given: Any) -> Annotated[CallToolResult, outcomes.TaskCreated]:
        """Add a pending task to a plan."""
        plan, blocked_by, blocks = given.pop("plan"), given.pop("blockedBy"), given.pop("blocks")
        new = NewTask(blocked_by=blocked_by, blocks=blocks, **given)
        return await _answer(ctx, lambda a, s: a.task_create(s, new, plan=plan))

    async def task_update(ctx: Context, **given: Any) -> Annotated[CallToolResult, outcomes.TaskUpdated]:
        """Change a task (in_progress + owner claims it; deleted removes it). note appends; a
        leaseSeconds claim lapses unless renewed."""
        own = {name: given.pop(name) for name in _UPDATE_OWN}
        patch = TaskPatch(
            status=own["status"],
            add_blocked_by=own["addBlockedBy"],
            add_blocks=own["addBlocks"],
            remove_blocked_by=own["removeBlockedBy"],
            remove_blocks=own["removeBlocks"],
            lease_seconds=own["leaseSeconds"],
            label=own["label"],
            note=own["note"],
            **given,
        )
        return await _task_update(ctx, own["taskId"], own["plan"], patch, own["waitSeconds"])

    sdk.set_parameters(task_create, _CREATE_PARAMETERS)
    sdk.set_parameters(task_update, _UPDATE_PARAMETERS)
    server.tool(name="TaskCreate", annotations=WRITE)(task_create)
    server.tool(name="TaskUpdate", annotations=UPDATE)(task_update)

    @server.tool(name="TaskList", annotations=READ)
    async def task_list(
        ctx: Context,
        plan: PlanName = None,
        status: Annotated[
            ListStatus | None,
            Field(description="ready: startable, best first"),
        ] = None,
        owner: str | None = None,
        limit: Annotated[int, Field(ge=1, le=MAX_PAGE)] = DEFAULT_PAGE,
        cursor: str | None = None,
        label: str | None = None,
        parent: StrictInt | None = None,
    ) -> Annotated[CallToolResult, outcomes.TaskListed]:
        """The plan's task board, one line a task."""
        return await _answer(
            ctx,
            lambda a, s: a.task_list(
                s, plan, status=status, owner=owner, limit=limit, cursor=cursor, label=label, parent=parent
            ),
        )

    @server.tool(name="TaskGet", annotations=READ)
    async def task_get(
        taskId: TaskId, ctx: Context, plan: PlanName = None
    ) -> Annotated[CallToolResult, outcomes.TaskFetched]:
        """One task in full."""
        return await _answer(ctx, lambda a, s: a.task_get(s, taskId, plan))

    @server.tool(
        name="todo",
        annotations=UPDATE,
        description=f"This session's checklist for the step at hand (≤{MAX_TODO_ITEMS} items, one "
        "in_progress; not saved).",
    )
    async def todo(
        items: list[TodoItem],
        ctx: Context,
        topic: str | None = None,
    ) -> Annotated[CallToolResult, outcomes.TodoListed]:
        return await _answer(ctx, lambda a, s: a.todo(s, items, topic), inline=True)

    compact_schemas(server)
