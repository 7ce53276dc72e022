"""Prompts: plan mode, resume, verify: the three ways an agent enters, resumes and checks a plan."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, GetPromptRequestParams, GetPromptResult, InputRequiredResult

from planning_core import PlanningError
from planning_core.queries import PageQuery

from . import sdk
from .resources import active_text, plan_text
from .state import AppState, app_state, session_key

READY_SHOWN = 20  # ready tasks the resume prompt lists per plan

PLAN_MODE = """You are in plan mode: plan only, change nothing yet.

Task: {task}

1. Explore read-only: search and read the code and documents this task touches. Do not edit files or run \
anything that changes state.
2. Analyse: what exists, what must change, the risks and unknowns.
3. Design the approach, and split it into tasks of a few hours at most, each with a clear done-condition; \
note which tasks must wait for others (blockedBy, by position).
4. Present the plan (analysis, approach, ordered steps with their dependencies) to the human and wait \
for their review; or call PlanCreate with review: true, which asks them to approve or send it back where \
the client can ask, and writes nothing unless they approve.
5. Only after they approve: call PlanCreate with title, analysis, approach, steps and tasks; then work \
through the tasks with TaskUpdate (in_progress when you start one, completed when it is verified)."""

RESUME = """Resume the work in progress. The plans on disk are the source of truth, not your memory.

{active}

Tasks ready to start now (pending, every blocker completed):
{ready}

Next: call TaskList on the plan you continue; finish a task already in_progress before starting another; \
set a ready task to in_progress (with your owner name if several agents share the plan) before working on it, \
and to completed only after checking it works."""

VERIFY = """Verify plan {name} before archiving it. Three checks:

1. Automated: run the test suite, linters and type checkers the project uses; all must pass.
2. Functional: exercise what was built the way a user would (run the command, call the endpoint, \
open the page) and watch it work.
3. Against the request: read plan.md below and check each point of the original request and each step \
one by one; name any that is missing or only partly done.

For every task whose check fails: TaskUpdate it back to pending (or in_progress) with a description of what \
failed, fix it, and verify again. When all three checks pass: PlanArchive.

{plan}"""


def _ready_lines(state: AppState) -> str:
    lines = []
    for name in state.actions.active_plans():
        try:
            page = state.actions.tasks_page(name, PageQuery("ready", None, READY_SHOWN, 0))
        except PlanningError:
            continue
        lines += [f"- {name} #{t.id} {t.subject}" for t in page.tasks]
    return "\n".join(lines) or "(none)"


def check_prompt_request(server: MCPServer[AppState], params: GetPromptRequestParams) -> None:
    """An unknown prompt or a missing argument is the caller's mistake: invalid params
    with the reason. (The SDK raises ValueError for both, which reaches 2025 clients as
    code 0 and 2026 clients as a bare internal error.)"""
    prompt = sdk.find_prompt(server, params.name)
    if prompt is None:
        known = ", ".join(sdk.prompt_names(server))
        raise MCPError(INVALID_PARAMS, f"Unknown prompt {params.name!r}; the prompts are: {known}.")
    given = params.arguments or {}
    missing = sorted(a.name for a in prompt.arguments or [] if a.required and a.name not in given)
    if missing:
        raise MCPError(
            INVALID_PARAMS, f"Prompt {params.name!r} needs the argument(s): {', '.join(missing)}.", {"missing": missing}
        )


def register(server: MCPServer[AppState]) -> None:
    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: GetPromptRequestParams
    ) -> GetPromptResult | InputRequiredResult:
        check_prompt_request(server, params)
        result: GetPromptResult | InputRequiredResult = await sdk.sdk_get_prompt(server, ctx, params)
        return result

    sdk.add_request_handler(server, "prompts/get", GetPromptRequestParams, get_prompt)

    @server.prompt(name="plan-mode", description="Read-only planning, then human review, then PlanCreate.")
    def plan_mode(task: str) -> str:
        return PLAN_MODE.format(task=task)

    @server.prompt(name="resume", description="The active plans and the tasks ready now: what to do next.")
    async def resume(ctx: Context) -> str:
        state = app_state(ctx)

        def build() -> str:
            # What happened in the last day (who completed, claimed, reopened, added what),
            # after the active plans; nothing is added when nothing happened.
            since = state.actions.since_text(None)
            active = active_text(state) + (f"\n\n{since}" if since else "")
            return RESUME.format(active=active, ready=_ready_lines(state))

        return await anyio.to_thread.run_sync(build)

    @server.prompt(name="verify", description="The three checks before a plan is archived; reopen failures.")
    async def verify(ctx: Context, plan: str | None = None) -> str:
        state = app_state(ctx)
        current = state.session(session_key(ctx.request_context)).current_plan

        def build() -> str:
            try:
                name = state.actions.resolve(plan, current)
                return VERIFY.format(name=name, plan=plan_text(state, name))
            except PlanningError as e:
                return f"Cannot verify: {e}"

        return await anyio.to_thread.run_sync(build)
