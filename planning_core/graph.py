"""The dependency rules, on a lazily loaded graph.

Only the tasks a rule actually visits are read, so a write stays cheap however
large the plan grows. `blockedBy` is the source of truth; `blocks` mirrors it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .models import Task, TaskStatus

Lookup = Callable[[int], Task]


def path_via_blockers(start: int, goal: int, lookup: Lookup) -> list[int] | None:
    """A chain start -> blocker -> blocker ... -> goal following blockedBy, if one exists."""
    if start == goal:
        return [start]
    parent: dict[int, int] = {start: start}
    stack = [start]
    while stack:
        node = stack.pop()
        for nxt in lookup(node).blocked_by:
            if nxt in parent:
                continue
            parent[nxt] = node
            if nxt == goal:
                path = [goal]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return path[::-1]
            stack.append(nxt)
    return None


def cycle_if_linked(blocker: int, blocked: int, lookup: Lookup) -> list[int] | None:
    """The cycle that `blocker blocks blocked` would close, in `blocks` order, e.g. [4, 2, 4]."""
    chain = path_via_blockers(blocker, blocked, lookup)
    if chain is None:
        return None
    # chain: blocker is blocked by ... by `blocked`; read backwards it is a blocks-path.
    return [*chain[::-1], blocked]


def open_blockers(task: Task, lookup: Lookup) -> list[int]:
    return [b for b in task.blocked_by if lookup(b).status is not TaskStatus.COMPLETED]


def is_ready(task: Task, statuses: dict[int, TaskStatus]) -> bool:
    return task.status is TaskStatus.PENDING and all(
        statuses.get(b) is TaskStatus.COMPLETED for b in task.blocked_by
    )


def is_blocked(task: Task, statuses: dict[int, TaskStatus]) -> bool:
    return task.status is not TaskStatus.COMPLETED and any(
        statuses.get(b) is not TaskStatus.COMPLETED for b in task.blocked_by
    )


def link(blocker: Task, blocked: Task) -> None:
    if blocker.id not in blocked.blocked_by:
        blocked.blocked_by.append(blocker.id)
    if blocked.id not in blocker.blocks:
        blocker.blocks.append(blocked.id)


def unlink(blocker: Task, blocked: Task) -> None:
    blocked.blocked_by = [i for i in blocked.blocked_by if i != blocker.id]
    blocker.blocks = [i for i in blocker.blocks if i != blocked.id]


def positional_cycle(deps: dict[int, Iterable[int]]) -> list[int] | None:
    """A cycle among new tasks given as id -> blockedBy ids (for PlanCreate)."""
    state: dict[int, int] = {}  # 1 = on stack, 2 = done
    stack: list[int] = []

    def visit(node: int) -> list[int] | None:
        state[node] = 1
        stack.append(node)
        for nxt in deps.get(node, ()):
            if state.get(nxt) == 1:
                loop = stack[stack.index(nxt) :]
                # stack holds blockedBy order; print it as blocks order.
                return [*loop[::-1], loop[-1]]
            if state.get(nxt) is None and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for n in deps:
        if state.get(n) is None and (found := visit(n)):
            return found
    return None
