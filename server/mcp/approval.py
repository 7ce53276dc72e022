"""A person's approval asked for where the client can ask (MCP elicitation in form mode,
as for the plan review: server/mcp/review.py): an agent's TaskUpdate that completes a task
gated for a person (planning_core.gates) is refused, and, where its client can ask its
user, the person is asked first; their approval completes the task as `planning-mcp
approve` does. No answer within APPROVAL_WAIT_S, a decline, or a client that cannot ask:
the refusal stands."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.to_thread
from mcp.server.elicitation import AcceptedElicitation
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

from planning_core import PlanningError
from planning_core.safetext import escape

from .review import client_can_ask
from .state import app_state

APPROVAL_WAIT_S = 600.0  # a person decides; a client that never answers must not hold the agent longer
APPROVED = "Approved by the person when asked."
NOT_APPROVED = "The person was asked and did not approve it: leave it to them."


class Approval(BaseModel):
    """The form the person answers."""

    approve: bool = Field(title="Approve", description="Yes: the task is completed, and the work after it can start.")


async def asked_person(ctx: Context, task_id: Any, plan: str | None) -> bool | None:
    """Ask the person to approve the task, when it waits for one and the client can ask:
    True approved, False not, None not asked."""
    if not client_can_ask(ctx):
        return None
    state = app_state(ctx)
    caller = state.caller(ctx.request_context)
    try:
        task = await anyio.to_thread.run_sync(lambda: state.actions.waits_for_person(caller, task_id, plan))
    except PlanningError:
        return None
    if task is None:
        return None
    question = (
        f"The agent asks to complete task #{task.id} {escape(task.subject)}, which waits for your approval. Approve it?"
    )
    with anyio.move_on_after(APPROVAL_WAIT_S):
        try:
            answer = await ctx.elicit(question, Approval)
        except (ValueError, MCPError):  # no usable answer, or the client could not ask after all
            return False
        return isinstance(answer, AcceptedElicitation) and answer.data.approve
    return False
