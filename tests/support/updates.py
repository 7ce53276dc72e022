"""What a legacy (2025 subscribe) client is told: resources/updated and list_changed notices."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.types import ResourceListChangedNotification, ResourceUpdatedNotification

from tests.support.waits import bound


class Inbox:
    """A message_handler that records the notices, in order, as short labels
    ("updated <uri>", "list_changed")."""

    def __init__(self) -> None:
        self.labels: list[str] = []
        self._changed = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            self.labels.append(f"updated {message.params.uri}")
        elif isinstance(message, ResourceListChangedNotification):
            self.labels.append("list_changed")
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, label: str, after: int = 0) -> None:
        """Until `label` arrives (at index `after` or later)."""
        with anyio.fail_after(bound(10)):
            while label not in self.labels[after:]:
                await self._changed.wait()
