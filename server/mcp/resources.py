"""Resources: the Active Plans block, each plan with its board, each task as JSON.

resources/list names plans://active and every active plan, so a client that browses
resources (and is told by list_changed that the list moved) finds the plans.
A read of something that is not there is the protocol's resource-not-found error
(`ResourceNotFoundError`; app.py gives 2025 sessions their spec's -32002), with the reason."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.types import ListResourcesResult, PaginatedRequestParams, Resource

from planning_core import PlanningError
from planning_core.errors import InvalidInput, PlanNotFound, TaskNotFound
from planning_core.queries import MAX_PAGE, PageQuery
from planning_core.rendering.mermaid import task_graph
from planning_core.rendering.render import active_plans_block, task_board

from . import board_app, sdk
from .notify import plan_uri
from .state import AppState, app_state


def active_text(state: AppState) -> str:
    return active_plans_block(state.actions.summaries())


def plan_text(state: AppState, name: str) -> str:
    md = state.actions.plan_md(name)
    page = state.actions.tasks_page(name, PageQuery(None, None, MAX_PAGE, 0))
    board = task_board(page.plan, page.tasks, page.open_blockers, page.unreadable, page.next_cursor)
    graph = task_graph(page.tasks, page.unreadable)
    return f"{md.rstrip()}\n\n## Tasks\n\n{board}\n\n```mermaid\n{graph}\n```\n"


def task_json(state: AppState, name: str, task_id: str) -> str:
    return state.actions.get_task(name, task_id).to_json()


PLAN_MIME = "text/markdown"
# No such plan or task, or a URI that cannot name one (a bad plan name or task id).
NOT_FOUND = (PlanNotFound, TaskNotFound, InvalidInput)


def plan_resources(state: AppState) -> list[Resource]:
    """One resource per active plan: a directory listing plus a stat per plan
    (titles are cached by the store until plan.md changes)."""
    actions = state.actions
    return [
        Resource(uri=plan_uri(name), name=name, title=actions.plan_title(name), mime_type=PLAN_MIME)
        for name in actions.active_plans()
    ]


def register(server: MCPServer[AppState], state: AppState) -> None:
    board_app.register(server, state)  # ui://planning/board, its app-only tool, the links from PlanList/TaskList

    async def read(ctx: Context, fn: object, *args: str) -> str:
        try:
            return await anyio.to_thread.run_sync(fn, app_state(ctx), *args)  # type: ignore[arg-type]
        except NOT_FOUND as e:
            raise ResourceNotFoundError(str(e)) from None
        except PlanningError as e:
            raise ResourceError(str(e)) from None

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams
    ) -> ListResourcesResult:
        plans = await anyio.to_thread.run_sync(plan_resources, state)
        listed = board_app.for_client(ctx, await server.list_resources())  # ui:// only to Apps clients
        return ListResourcesResult(resources=[*listed, *plans])

    # The SDK lists only static resources; the plans are behind a template.
    sdk.add_request_handler(server, "resources/list", PaginatedRequestParams, list_resources)

    @server.resource(
        "plans://active",
        name="active-plans",
        title="Active Plans",
        description="One line per active plan: progress and the task in progress.",
        mime_type=PLAN_MIME,
    )
    async def active() -> str:
        return await anyio.to_thread.run_sync(active_text, state)

    @server.resource(
        "plans://{name}",
        name="plan",
        description="A plan's plan.md, its task board and its dependency graph (Mermaid).",
        mime_type=PLAN_MIME,
    )
    async def plan(name: str, ctx: Context) -> str:
        return await read(ctx, plan_text, name)

    @server.resource(
        "plans://{name}/tasks/{id}",
        name="task",
        description="One task file as JSON.",
        mime_type="application/json",
    )
    async def task(name: str, id: str, ctx: Context) -> str:
        return await read(ctx, task_json, name, id)
