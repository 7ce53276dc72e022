"""A private tmux server (its own socket): a real terminal, for what a user's screen shows."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.support.waits import bound

from .procs import wait_until

TMUX = shutil.which("tmux")
NO_TMUX = "tmux is not installed (apt-get install -y tmux; .ci/run installs it)"


class Tmux:
    """One session named `name` on a server of our own; `kill()` ends the server."""

    def __init__(self, socket: Path, name: str = "t") -> None:
        assert TMUX is not None, NO_TMUX
        self.base = [TMUX, "-S", str(socket)]
        self.name = name

    def start(self, command: str, width: int = 110, height: int = 30) -> None:
        subprocess.run(
            [*self.base, "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), command],
            check=True,
            timeout=bound(10),
        )

    def screen(self) -> str:
        return self._ask("capture-pane", "-p", "-t", self.name)

    def title(self) -> str:
        return self._ask("display-message", "-p", "-t", self.name, "#{pane_title}")

    def wait_for(self, *needles: str, timeout: float = bound(15)) -> str:
        """The screen once it shows every needle: the program has drawn (its ready signal)."""
        screen = [""]

        def shown() -> bool:
            screen[0] = self.screen()
            return all(n in screen[0] for n in needles)

        try:
            wait_until(shown, f"pane showing {needles!r}", timeout, every=0.1)
        except AssertionError as e:
            raise AssertionError(f"{e}; last screen:\n{screen[0]}") from None
        return screen[0]

    def keys(self, *keys: str) -> None:
        subprocess.run([*self.base, "send-keys", "-t", self.name, *keys], capture_output=True, timeout=bound(10))

    def kill(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, timeout=bound(10))

    def _ask(self, *args: str) -> str:
        return subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=bound(10)).stdout
