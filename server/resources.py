"""Resources: the Active Plans block, each plan with its board, each task as JSON."""

from __future__ import annotations

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError

from planning_core import PlanningError
from planning_core.mermaid import task_graph
from planning_core.render import active_plans_block, task_board

from .state import AppState, app_state


def active_text(state: AppState) -> str:
    return active_plans_block(state.planner.summaries())


def plan_text(state: AppState, name: str) -> str:
    md = state.store.read_plan_md(name)
    page = state.planner.list_tasks(name, limit=1000)
    board = task_board(page.plan, page.tasks, page.open_blockers, page.unreadable, page.next_cursor)
    graph = task_graph(page.tasks, page.unreadable)
    return f"{md.rstrip()}\n\n## Tasks\n\n{board}\n\n```mermaid\n{graph}\n```\n"


def task_json(state: AppState, name: str, task_id: str) -> str:
    return state.planner.get_task(name, task_id).to_json()


def register(server: MCPServer[AppState], state: AppState) -> None:
    async def read(ctx: Context, fn: object, *args: str) -> str:
        try:
            return await anyio.to_thread.run_sync(fn, app_state(ctx), *args)  # type: ignore[arg-type]
        except PlanningError as e:
            raise ResourceError(str(e)) from None

    @server.resource(
        "plans://active",
        name="active-plans",
        title="Active Plans",
        description="One line per active plan: progress and the task in progress.",
        mime_type="text/markdown",
    )
    async def active() -> str:
        return await anyio.to_thread.run_sync(active_text, state)

    @server.resource(
        "plans://{name}",
        name="plan",
        description="A plan's plan.md, its task board and its dependency graph (Mermaid).",
        mime_type="text/markdown",
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
