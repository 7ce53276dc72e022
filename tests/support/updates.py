"""What a legacy (2025 subscribe) client hears: resources/updated notifications."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.types import ResourceUpdatedNotification


class ResourceUpdates:
    """A client message handler that records each updated resource's URI and wakes a waiter."""

    def __init__(self) -> None:
        self.heard: list[str] = []
        self.got = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            self.heard.append(str(message.params.uri))
            self.got.set()

    def expect_next(self) -> None:
        """Forget what was heard: `got` is set again only by a notice after this call."""
        self.heard.clear()
        self.got = anyio.Event()
