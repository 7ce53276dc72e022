"""A real git repository in a temporary folder, with plans committed in it: the set-up
`planning-mcp git-setup` makes, branches, and tasks written through the real file store."""

from __future__ import annotations

import datetime as dt
import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from planning_core.planner import Planner
from planning_core.stores.files import FileStore

from .procs import child_env, console_script

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,  # the machine's settings (signing, hooks path) stay out
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_EDITOR": "true",
}
PLAN_SLUG = "work"


class Clock:
    """Update stamps one second apart (after every creation stamp, which is the real time), so
    which side changed a field later is known."""

    def __init__(self) -> None:
        self._ticks = itertools.count()
        self._start = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(hours=1)

    def __call__(self) -> dt.datetime:
        return self._start + dt.timedelta(seconds=next(self._ticks))


class Repo:
    def __init__(self, path: Path, clock: Clock | None = None) -> None:
        self.path = path
        self.clock = clock or Clock()
        path.mkdir(parents=True, exist_ok=True)

    @classmethod
    def create(cls, path: Path, *, setup: bool = True) -> Repo:
        repo = cls(path)
        repo.git("init", "-q", "-b", "main")
        (path / "README").write_text("x\n")
        # What the server's own .planning/.gitignore keeps out of commits.
        (path / ".gitignore").write_text(".planning/**/.lock\n.planning/.hooks/\n")
        repo.git("add", "README", ".gitignore")
        repo.git("commit", "-q", "-m", "start")
        if setup:
            repo.setup()
        return repo

    def env(self) -> dict[str, str]:
        """git's environment; this package's commands (the merge strategy) on PATH, as an install puts them."""
        env = child_env(GIT_ENV)
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        return env

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["git", *args], cwd=self.path, capture_output=True, text=True, env=self.env(), timeout=120
        )
        if check and done.returncode:
            raise AssertionError(f"git {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [console_script(), *args],
            cwd=self.path,
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=60,
            stdin=subprocess.DEVNULL,
        )

    def setup(self) -> None:
        done = self.cli("git-setup", "--root", str(self.path / ".planning"))
        assert done.returncode == 0, done.stderr
        self.git("add", ".gitattributes")
        self.git("commit", "-q", "-m", "git-setup")

    @property
    def root(self) -> Path:
        return self.path / ".planning"

    def planner(self) -> Planner:
        """A fresh store each time: git changes the files under a store's cache."""
        store = FileStore(self.root)
        store.ensure_writable()
        return Planner(store, clock=self.clock)

    def plan(self) -> str:
        return next(iter(self.planner().store.active_plans()))

    def folder(self) -> Path:
        return self.root / "todo" / self.plan()

    def new_plan(self, subjects: list[str]) -> str:
        tasks: list[dict[str, Any]] = [{"subject": s} for s in subjects]
        name = (
            self.planner()
            .create_plan("Work", analysis="", approach="", name=PLAN_SLUG, date="2026-12-01", tasks=tasks)
            .name
        )
        self.commit(f"plan {name}")
        return name

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)

    def update_on(self, branch: str, plan: str, task: int, message: str, *, new: bool = False, **fields: Any) -> None:
        """Check out `branch` (made from the current one when `new`), update task `task` of
        `plan` there, and commit it with `message`."""
        self.git("checkout", "-q", *(["-b"] if new else []), branch)
        self.planner().update_task(plan, task, **fields)
        self.commit(message)

    def tracked_status(self) -> str:
        return self.git("status", "--porcelain", "--untracked-files=no").stdout
