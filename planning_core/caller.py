"""Who calls the core: the writer the plans' history names and the session the call is for.

Every action (planning_core/actions.py) takes one as its first argument, and a write hands
`who` on to the store (`by`), so nothing about the caller travels in a context variable: a
tool call builds it from its session (server/mcp/tools.py), a command from its own name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the seam (store.py) loads this module for NOBODY alone
    from .session import Session

NOBODY = "-"  # the writer of a change no caller named


@dataclass(frozen=True)
class Caller:
    who: str  # the writer the history names: a session's key or client's name, a command's name
    session: Session  # the session's current plan, todo list and claims, kept across its calls
