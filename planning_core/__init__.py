"""planning_core: Session Plans on disk, the task graph, todo lists and reminders.

Plain typed Python with no knowledge of MCP; the server in `server/` is a thin
adapter over it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .errors import (
        ClaimConflict,
        CorruptTask,
        DependencyCycle,
        InvalidInput,
        InvalidPlanName,
        InvalidSlug,
        InvalidTaskId,
        NoCurrentPlan,
        PlanArchived,
        PlanBusy,
        PlanExists,
        PlanningError,
        PlanNotFinished,
        PlanNotFound,
        SelfDependency,
        StorageError,
        TaskBlocked,
        TaskNotFound,
        TodoInvalid,
    )
    from .models import CorruptFile, PlanSnapshot, PlanSummary, Progress, Task, TaskSpec, TaskStatus, TodoItem
    from .planner import Planner, TaskChange
    from .queries import TaskPage
    from .session import PLAN_REMINDER, TODO_REMINDER, Session
    from .store import PlanStore, PlanTransaction
    from .todo import TodoList

__all__ = [
    "PLAN_REMINDER",
    "TODO_REMINDER",
    "ClaimConflict",
    "CorruptFile",
    "CorruptTask",
    "DependencyCycle",
    "InvalidInput",
    "InvalidPlanName",
    "InvalidSlug",
    "InvalidTaskId",
    "NoCurrentPlan",
    "PlanArchived",
    "PlanBusy",
    "PlanExists",
    "PlanNotFinished",
    "PlanNotFound",
    "PlanSnapshot",
    "PlanStore",
    "PlanSummary",
    "PlanTransaction",
    "Planner",
    "PlanningError",
    "Progress",
    "SelfDependency",
    "Session",
    "StorageError",
    "Task",
    "TaskBlocked",
    "TaskChange",
    "TaskNotFound",
    "TaskPage",
    "TaskSpec",
    "TaskStatus",
    "TodoInvalid",
    "TodoItem",
    "TodoList",
]

# Each name is imported on first use: a command that needs a light part (the Claude Code
# hook counting a round) does not load the models and pydantic.
_LAZY = {
    "ClaimConflict": ".errors",
    "CorruptTask": ".errors",
    "DependencyCycle": ".errors",
    "InvalidInput": ".errors",
    "InvalidPlanName": ".errors",
    "InvalidSlug": ".errors",
    "InvalidTaskId": ".errors",
    "NoCurrentPlan": ".errors",
    "PlanArchived": ".errors",
    "PlanBusy": ".errors",
    "PlanExists": ".errors",
    "PlanningError": ".errors",
    "PlanNotFinished": ".errors",
    "PlanNotFound": ".errors",
    "SelfDependency": ".errors",
    "StorageError": ".errors",
    "TaskBlocked": ".errors",
    "TaskNotFound": ".errors",
    "TodoInvalid": ".errors",
    "CorruptFile": ".models",
    "PlanSnapshot": ".models",
    "PlanSummary": ".models",
    "Progress": ".models",
    "Task": ".models",
    "TaskSpec": ".models",
    "TaskStatus": ".models",
    "TodoItem": ".models",
    "Planner": ".planner",
    "TaskChange": ".planner",
    "TaskPage": ".queries",
    "PLAN_REMINDER": ".session",
    "TODO_REMINDER": ".session",
    "Session": ".session",
    "PlanStore": ".store",
    "PlanTransaction": ".store",
    "TodoList": ".todo",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
