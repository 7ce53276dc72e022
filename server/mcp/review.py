"""The person's review of a plan before PlanCreate writes it (PlanCreate `review: true`).

Where the client can ask its user (MCP elicitation in form mode, on a connection that can
carry a request from the server inside a call: protocol 2025-11-25 and older; the
2026-07-28 round trip through an input-required result is not done here), the plan is
shown to them to approve or send back with what to change, and nothing is written unless
they approve. Where it cannot, or nobody answers within REVIEW_WAIT_S, PlanCreate writes
the plan as it does without a review, and says that no review took place. A client that
can ask but answers the question with an error gets nothing written (FAILED). Off unless a
call asks for it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import anyio
from mcp.server.elicitation import AcceptedElicitation, DeclinedElicitation
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

from planning_core import TaskSpec
from planning_core.safetext import escape

# A person reads the plan and decides; a client that never answers must not hold the
# call (nor the agent) for longer than this.
REVIEW_WAIT_S = 600.0
SHOWN_MAX = 4000  # characters of the plan in the question: a form, not the whole document

NO_CLIENT_SUPPORT = (
    "No review: this client cannot be asked here (form elicitation, over MCP 2025-11-25 or older); "
    "the plan was written as asked."
)
NO_ANSWER = "No review: nobody answered within {seconds:g} s; the plan was written as asked."
APPROVED = "Approved by the person before it was written."
SENT_BACK = (
    "Not written: the person sent the plan back. What to change: {changes}\n"
    "Revise the plan and call PlanCreate again (with review: true to ask again)."
)
DECLINED = "Not written: the person declined the plan. Ask them what to change before calling PlanCreate again."
CANCELLED = "Not written: the review was dismissed without an answer. Ask the person before calling PlanCreate again."
FAILED = (
    "Not written: the client could not show the review (its error: {error}). Ask the person before "
    "calling PlanCreate again."
)
ERROR_SHOWN_MAX = 200  # characters of the client's error message in the answer


class PlanReview(BaseModel):
    """The form the person answers."""

    approve: bool = Field(title="Approve this plan", description="Yes: the plan is written and work starts.")
    changes: str = Field(
        default="", title="What to change", description="If not approved: what the agent should revise."
    )


@dataclass(frozen=True)
class Verdict:
    """What the review decided: write the plan (with `note` added to the answer) or not
    (`refusal` is the answer)."""

    write: bool
    note: str


def client_can_ask(ctx: Context) -> bool:
    session = ctx.request_context.session
    caps = session.client_capabilities
    elicitation = caps.elicitation if caps is not None else None
    # An empty elicitation capability is form mode (the 2025-06-18 spelling).
    form = elicitation is not None and (elicitation.form is not None or elicitation.url is None)
    return form and session.can_send_request


def question(title: str, approach: str, steps: Sequence[str] | None, tasks: Sequence[TaskSpec] | None) -> str:
    lines = [f"Approve this plan before the agent writes it and starts?\n\n# {title}\n\nApproach: {approach}"]
    if steps:
        lines.append("Steps:\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)))
    if tasks:
        lines.append("Tasks:\n" + "\n".join(f"{i}. {t.subject}" for i, t in enumerate(tasks, 1)))
    text = "\n\n".join(lines)
    return text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 1] + "…"


async def review(
    ctx: Context, title: str, approach: str, steps: Sequence[str] | None, tasks: Sequence[TaskSpec] | None
) -> Verdict:
    if not client_can_ask(ctx):
        return Verdict(True, NO_CLIENT_SUPPORT)
    with anyio.move_on_after(REVIEW_WAIT_S):
        try:
            answer = await ctx.elicit(question(title, approach, steps, tasks), PlanReview)
        except ValueError:  # accepted with no or malformed content: not an approval
            return Verdict(False, CANCELLED)
        except MCPError as e:
            # The client declared it can ask: an error answer is a review that failed, never
            # "no client to ask" (which writes the plan unreviewed).
            return Verdict(False, FAILED.format(error=escape(str(e)[:ERROR_SHOWN_MAX])))
        if isinstance(answer, AcceptedElicitation):
            if answer.data.approve:
                return Verdict(True, APPROVED)
            return Verdict(False, SENT_BACK.format(changes=answer.data.changes.strip() or "(not said)"))
        return Verdict(False, DECLINED if isinstance(answer, DeclinedElicitation) else CANCELLED)
    return Verdict(True, NO_ANSWER.format(seconds=REVIEW_WAIT_S))
