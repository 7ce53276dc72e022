"""planning_core: Session Plans on disk, the task graph, todo lists and reminders.

Plain typed Python with no knowledge of MCP; the server in `server/` is a thin
adapter over it.
"""

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
