"""Assembling the MCP server: its state (built once per server object, never global),
the watcher run by the lifespan, tools, resources, prompts, and the middleware that adds
reminders and the live Active Plans block."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolResult,
    SubscribeRequestParams,
    TextContent,
    UnsubscribeRequestParams,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from planning_core import PlanningError, Session
from planning_core.actions import Actions
from planning_core.events import EventHooks
from planning_core.models import problem_line
from planning_core.rendering.render import active_plans_block
from planning_core.session import PLAN_REMINDER
from planning_core.store import PlanFolders, PlanStore
from planning_core.stores import open_store
from planning_core.verify import CheckFile, ChecksUnavailable

from .. import __version__
from . import hosts, prompts, resources, sdk, tools
from .board_app import APP_ONLY_TOOLS
from .notify import Notifier, watch
from .state import AppState, session_key

USAGE = """planning-mcp keeps your plans on disk so they survive context loss and restarts.
For work of 3+ steps: PlanCreate (analysis, approach, tasks with blockedBy), then TaskUpdate each task to \
in_progress when you start it and completed when it is verified; TaskList shows the board (status='ready' \
for what can start). `todo` is a short in-memory checklist for the current step. Lost your place? Read \
plans://active or call PlanList and TaskList."""


def instructions(state: AppState) -> str:
    return f"{USAGE}{checks_line(state)}\n\n{active_plans_block(state.actions.summaries())}"


def checks_line(state: AppState) -> str:
    """The checks a task may name, when the check file defines any (else nothing)."""
    verifier = state.actions.verifier
    try:
        names = sorted(verifier.checks.load()) if verifier is not None else []
    except ChecksUnavailable:
        return ""
    if not names:
        return ""
    return f"\nChecks a task's acceptance may name (`check:NAME`; run before it completes): {', '.join(names)}."


def build_server(
    store: PlanStore | Path | str,
    *,
    lock_timeout: float | None = None,
    watch_interval: float = 0.25,
    hooks: EventHooks | None = None,
    notifier: Notifier | None = None,
) -> MCPServer:
    """An MCPServer over the plans in `store` (a store, or what `--store` takes: a folder or
    a URL); one state (sessions included) per server object. A store passed in stays the
    caller's to close. `hooks`: the event hooks the person starting the server configured (never from a plan).
    `notifier`: pass one to look at its subscriptions (tests); by default a new one."""
    notifier = notifier or Notifier(InMemorySubscriptionBus())
    bus = notifier.bus
    if isinstance(store, (str, Path)):
        store = open_store(store, lock_timeout=lock_timeout)
    actions = Actions.over(store, hooks, CheckFile.of_root(store.root if isinstance(store, PlanFolders) else None))
    verifier = actions.verifier
    assert verifier is not None  # made from the check file just passed
    state = AppState(store=store, actions=actions)

    # The SDK enters the lifespan once per run: several in-memory clients (or SSE
    # connections) of one server object each start one. One watcher notifies every
    # connection, so only one may run at a time, else each change is sent once per run;
    # when its run ends, a waiting one takes over.
    one_watcher = anyio.Lock()
    runs = [0]  # lifespans running: the last to end stops the checks still running

    plans: PlanStore = store

    async def watch_alone() -> None:
        async with one_watcher:
            await watch(plans, notifier, watch_interval)

    @asynccontextmanager
    async def lifespan(_: MCPServer[AppState]) -> AsyncIterator[AppState]:
        await anyio.to_thread.run_sync(plans.prepare)
        runs[0] += 1
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch_alone)
            try:
                yield state
            finally:
                tg.cancel_scope.cancel()
                runs[0] -= 1
                if not runs[0]:
                    state.changes.close()  # the follower of waiting claims, if one runs
                    with anyio.CancelScope(shield=True):
                        await anyio.to_thread.run_sync(verifier.close)

    argument_names = tools.ArgumentNames()
    server: MCPServer[AppState] = MCPServer(
        "planning-mcp",
        title="Planning",
        version=__version__,
        instructions=USAGE,
        lifespan=lifespan,
        subscriptions=bus,
        log_level="WARNING",
        # Outermost first: reminders are appended after argument errors are shortened (a call
        # naming an unknown argument is refused like any call with malformed arguments).
        middleware=[
            notifier.middleware,
            _no_cursors,
            _resource_not_found_2025,
            _live_instructions,
            _text_only_hosts,
            _reminders,
            partial(_readable_argument_errors, argument_names),
            argument_names.refuse_unknown,
        ],
    )
    tools.register(server)
    resources.register(server, state)
    prompts.register(server)
    argument_names.read(server)
    # The SDK's high-level server has no subscribe hook for 2025 clients.
    sdk.add_request_handler(server, "resources/subscribe", SubscribeRequestParams, notifier.on_subscribe)
    sdk.add_request_handler(server, "resources/unsubscribe", UnsubscribeRequestParams, notifier.on_unsubscribe)
    return server


# We never issue a cursor (every list fits one page), so any cursor is one we did not
# issue: the spec's answer to that is invalid params, not the first page again.
LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
INVALID_CURSOR = "Invalid cursor: this server lists everything in one page and issued no cursor; list without one."
RESOURCE_NOT_FOUND_2025 = -32002  # the 2025 specs' code; 2026 uses -32602 (SEP-2164), as the SDK does


async def _no_cursors(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    if ctx.method in LISTS and (ctx.params or {}).get("cursor") is not None:
        raise MCPError(INVALID_PARAMS, INVALID_CURSOR)
    return await call_next(ctx)


async def _resource_not_found_2025(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """The SDK answers resource-not-found with -32602 on every protocol version; a 2025
    client expects its spec's -32002. Same message and data (the URI)."""
    try:
        return await call_next(ctx)
    except MCPError as e:
        legacy = ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
        if ctx.method == "resources/read" and legacy and e.code == INVALID_PARAMS and isinstance(e.data, dict):
            raise MCPError(RESOURCE_NOT_FOUND_2025, e.message, e.data) from None
        raise


async def _live_instructions(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Instructions carry the Active Plans block as it is when the client connects."""
    result = await call_next(ctx)
    if ctx.method in ("initialize", "server/discover") and isinstance(result, dict):
        state: AppState = ctx.lifespan_context
        if hosts.shows_text_only(ctx):  # it keeps them for good: a block here would go stale
            result["instructions"] = USAGE + await anyio.to_thread.run_sync(checks_line, state)
        else:
            result["instructions"] = await anyio.to_thread.run_sync(instructions, state)
        resources_capability = result.get("capabilities", {}).get("resources")
        if isinstance(resources_capability, dict):
            # The watcher sends list-changed notifications to 2025 clients too; say so.
            resources_capability["listChanged"] = True
    return result


async def _text_only_hosts(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """A host that shows its model only structured content gets the text (hosts.py)."""
    result = await call_next(ctx)
    if ctx.method in ("tools/call", "tools/list") and isinstance(result, dict) and hosts.shows_text_only(ctx):
        return hosts.text_only(ctx.method, result)
    return result


async def _reminders(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Count every tool call as a round of its session and append the reminders due. The
    session is held for the whole call (the tool changes it too)."""
    if ctx.method != "tools/call":
        return await call_next(ctx)
    state: AppState = ctx.lifespan_context
    tool = str((ctx.params or {}).get("name"))
    held = state.hold(session_key(ctx))
    try:
        session = await held.enter()
    except PlanningError as e:  # the store that keeps sessions is away: the call does not run
        refusal = CallToolResult(
            content=[TextContent(type="text", text=SESSION_UNREADABLE.format(reason=e))], is_error=True
        )
        return refusal.model_dump(by_alias=True, mode="json", exclude_none=True)
    try:
        result = await call_next(ctx)
        if tool not in APP_ONLY_TOOLS and isinstance(result, dict):  # the board app refreshing is no round
            result = await _remind(state, session, tool, result, hook_reminds=hosts.shows_text_only(ctx))
    finally:
        unsaved = await held.leave(session)
    if unsaved and isinstance(result, dict):
        result.setdefault("content", []).append({"type": "text", "text": SESSION_UNSAVED})
    return result


SESSION_UNREADABLE = "This call was not run: this session's state could not be read from the store ({reason})"
# Only the session's bookkeeping was lost; what the call did is what its answer above says
# (the store's own message about a lost connection is about the session row, not the call).
SESSION_UNSAVED = (
    "(This session's todo list, current plan and reminder count could not be saved to the store, so the "
    "next call may not see this call's changes to them. The answer above stands as it is.)"
)


async def _remind(
    state: AppState, session: Session, tool: str, result: dict[str, Any], *, hook_reminds: bool = False
) -> dict[str, Any]:
    """`hook_reminds`: the host's own hook says the plan reminder (hosts.py); the clock
    still counts the round."""
    succeeded = not result.get("isError")
    # Only a due plan reminder needs to know whether a task is in progress: a disk read,
    # done off the event loop and only then. The policy itself is Session.round's.
    has_work = session.plan_check_due(tool, succeeded=succeeded) and await anyio.to_thread.run_sync(
        state.plan_has_work, session
    )
    due = session.round(tool, succeeded=succeeded, plan_has_work=lambda: has_work)
    if hook_reminds:
        due = [text for text in due if text != PLAN_REMINDER]
    if due:
        texts = [block for block in result.get("content", []) if block.get("type") == "text"]
        if texts:
            texts[-1]["text"] += "\n" + "\n".join(due)
        else:
            result.setdefault("content", []).append({"type": "text", "text": "\n".join(due)})
    return result


async def _readable_argument_errors(
    names: tools.ArgumentNames, ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    result = await call_next(ctx)
    if ctx.method == "tools/call" and isinstance(result, dict) and result.get("isError"):
        _shorten_validation_error(result, str((ctx.params or {}).get("name")), names)
    return result


_INPUT_TYPE = re.compile(r"input_type=(\w+)\]")
_JSON_TYPES = {
    "bool": "true/false",
    "float": "a decimal number",
    "NoneType": "null",
    "dict": "an object",
    "list": "a list",
}


def _id_problem(field: str, detail: str) -> str | None:
    """Task ids are `int | str` (strict): pydantic reports each branch of the union; the
    model needs one line saying what an id is and what it sent instead."""
    base, _, branch = field.rpartition(".")
    if not base or branch not in ("int", "str"):
        return None
    found = _INPUT_TYPE.search(detail)
    sent = _JSON_TYPES.get(found.group(1), found.group(1)) if found else "something else"
    return f'{base}: a task id is a number or a string like "3" or "#3", not {sent}'


def _shorten_validation_error(result: dict[str, Any], tool: str, names: tools.ArgumentNames) -> None:
    """Turn the SDK's pydantic dump for malformed arguments into one line per field,
    without internal names or links, so the model can fix its call."""
    for block in result.get("content", []):
        errors = sdk.argument_errors(block.get("text", "") if block.get("type") == "text" else "")
        if errors is None:
            continue
        problems = []
        for field, detail in errors:
            if "[type=extra_forbidden" in detail:
                problem = names.unknown_field(tool, field)
            else:
                problem = _id_problem(field, detail) or problem_line(field, detail.split(" [type=")[0])
            if problem not in problems:
                problems.append(problem)
        if problems:
            block["text"] = tools.invalid_arguments(tool, problems)
