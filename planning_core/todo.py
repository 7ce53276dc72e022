"""The Memory Plan: a short checklist for the step at hand, held per session."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from . import safetext
from .errors import TodoInvalid
from .models import MAX_SHORT_TEXT, MAX_TODO_ITEMS, TaskStatus, TodoItem, first_problem
from .rendering.render import MARKS


class TodoList:
    def __init__(self) -> None:
        self.items: list[TodoItem] = []
        self.topic: str = ""

    def replace(self, items: Sequence[TodoItem | dict[str, Any]], topic: str | None = None) -> None:
        """Validate everything first; on any refusal the old list stays."""
        if len(items) > MAX_TODO_ITEMS:
            raise TodoInvalid(
                f"The todo list holds at most {MAX_TODO_ITEMS} items; you sent {len(items)}. "
                "Keep it to the step at hand and put larger work in the Session Plan (TaskCreate)."
            )
        parsed: list[TodoItem] = []
        for n, raw in enumerate(items, start=1):
            try:
                parsed.append(raw if isinstance(raw, TodoItem) else TodoItem.model_validate(raw))
            except ValidationError as e:
                raise TodoInvalid(f"items[{n}] is invalid ({first_problem(e)}).") from None
        running = [i for i, item in enumerate(parsed, start=1) if item.status == TaskStatus.IN_PROGRESS.value]
        if len(running) > 1:
            raise TodoInvalid(
                f"Only one item may be in_progress; items {', '.join(map(str, running))} are. "
                "Finish one before starting the next."
            )
        if topic is not None and len(topic) > MAX_SHORT_TEXT:
            raise TodoInvalid(f"topic is longer than {MAX_SHORT_TEXT} characters.")
        if topic is not None and (reason := safetext.problem(topic, "topic")):
            raise TodoInvalid(reason)
        self.items = parsed
        if topic is not None:
            self.topic = topic

    def clear(self) -> bool:
        """Empty the list; True if there was anything to clear."""
        had = bool(self.items)
        self.items = []
        self.topic = ""
        return had

    @property
    def unfinished(self) -> bool:
        return any(i.status != TaskStatus.COMPLETED.value for i in self.items)

    def render(self) -> str:
        if not self.items:
            return "Todo list is empty."
        done = sum(i.status == TaskStatus.COMPLETED.value for i in self.items)
        head = f"Todo{f' ({self.topic})' if self.topic else ''} [{done}/{len(self.items)} done]"
        return "\n".join([head, *(f"{MARKS[TaskStatus(i.status)]} {i.content}" for i in self.items)])
