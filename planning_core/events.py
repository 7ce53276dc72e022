"""Event hooks: commands the person running the server configured, run when tasks
are created or completed (the model is Claude Code's own TaskCreated/TaskCompleted).

Configured once, at server start (`--hooks FILE` or $PLANNING_MCP_HOOKS), never by
a plan folder or a tool call. The file is JSON:

    {"TaskCreated":   [{"command": "notify-send 'new task'", "timeout": 10}],
     "TaskCompleted": [{"command": "pytest -q -x >&2 || exit 2", "timeout": 300}]}

Each command runs through the shell in the server's working directory, with one
JSON object on stdin (event, plan, plan_dir, root, task_id, task_subject,
task_description, owner) and the same values in PLANNING_MCP_* environment
variables. Its output is captured, never passed through (on stdio the server's
stdout is the protocol channel).

TaskCompleted runs BEFORE the completion is written and outside the plan's lock,
so a slow check never blocks other writers. Outcomes:
- exit 0: the completion goes ahead (the next hook runs, if any);
- exit 2: the completion is refused; the hook's stderr (if empty: the tail of its
  stdout) is the tool error;
- timeout: the command (its whole process group) is killed and the completion is
  refused, saying so: a check that did not finish has not passed;
- any other exit, or a command that cannot start: logged to stderr, completion allowed
  (a broken hook must not wedge the agent).
TaskCreated runs after the task is written; it is informational, so every failure
is logged and nothing else happens. No outcome of any hook changes or loses data.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import CompletionRefused

log = logging.getLogger("planning_mcp.events")

TASK_CREATED = "TaskCreated"
TASK_COMPLETED = "TaskCompleted"
EVENTS = (TASK_CREATED, TASK_COMPLETED)
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
MAX_MESSAGE = 4000  # characters of a refusing hook's stderr passed on (its tail)
ENV_VAR = "PLANNING_MCP_HOOKS"


class HookConfigError(ValueError):
    """The hooks file cannot be used; the message says what to fix."""


@dataclass(frozen=True)
class HookCommand:
    command: str
    timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True)
class HookRun:
    command: HookCommand
    returncode: int | None  # None: timed out (killed) or could not start
    stderr: str
    stdout: str = ""
    timed_out: bool = False
    error: str = ""


@dataclass
class EventHooks:
    """The configured commands per event, and how to run them."""

    commands: Mapping[str, Sequence[HookCommand]] = field(default_factory=dict)
    cwd: Path | None = None
    source: str = ""

    def __bool__(self) -> bool:
        return any(self.commands.get(e) for e in EVENTS)

    def has(self, event: str) -> bool:
        return bool(self.commands.get(event))

    # -- loading ----------------------------------------------------------------

    @classmethod
    def from_file(cls, path: Path | str) -> EventHooks:
        p = Path(path).expanduser()
        try:
            raw = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise HookConfigError(f"hooks file {p} does not exist; fix --hooks or {ENV_VAR}") from None
        except OSError as e:
            raise HookConfigError(f"cannot read hooks file {p}: {e.strerror}") from None
        except ValueError as e:
            raise HookConfigError(f"hooks file {p} is not valid JSON ({e}); fix it or drop --hooks") from None
        return cls(parse_config(raw, str(p)), source=str(p))

    @classmethod
    def load(cls, path: str | None) -> EventHooks | None:
        """--hooks FILE, else $PLANNING_MCP_HOOKS, else no hooks."""
        chosen = path or os.environ.get(ENV_VAR) or None
        return cls.from_file(chosen) if chosen else None

    # -- running ------------------------------------------------------------------

    def task_created(self, payload: Mapping[str, Any]) -> None:
        """Informational: run every TaskCreated command, log failures, never raise."""
        for c in self.commands.get(TASK_CREATED, ()):
            try:
                r = run_command(c, TASK_CREATED, payload, self.cwd)
            except Exception as e:  # a hook must never cost the task that was just written
                log.warning("TaskCreated hook %r failed: %s", c.command, e)
                continue
            if r.timed_out:
                log.warning("TaskCreated hook %r timed out after %gs and was stopped", c.command, c.timeout)
            elif r.returncode != 0:
                log.warning("TaskCreated hook %r %s%s", c.command, _failed(r), _tail_line(r.stderr))

    def check_completion(self, payload: Mapping[str, Any]) -> None:
        """Run the TaskCompleted commands in order; raise CompletionRefused to refuse."""
        task = f"#{payload.get('task_id')}"
        for c in self.commands.get(TASK_COMPLETED, ()):
            r = run_command(c, TASK_COMPLETED, payload, self.cwd)
            if r.timed_out:
                raise CompletionRefused(
                    f"Task {task} was not marked completed: its TaskCompleted check `{c.command}` did not "
                    f"finish within {c.timeout:g}s and was stopped. Make the check pass faster, or ask the "
                    "user to raise its timeout in the hooks file; then try again."
                )
            if r.returncode == 2:
                message = r.stderr.strip() or r.stdout.strip()
                if len(message) > MAX_MESSAGE:
                    message = "…" + message[-MAX_MESSAGE:]
                raise CompletionRefused(
                    f"Task {task} was not marked completed: its TaskCompleted check `{c.command}` refused it"
                    + (f":\n{message}" if message else " (exit 2, no message).")
                    + "\nFix what it reports, then set the task to completed again."
                )
            if r.returncode != 0:
                log.warning(
                    "TaskCompleted hook %r %s; completion allowed%s", c.command, _failed(r), _tail_line(r.stderr)
                )


def parse_config(raw: Any, where: str = "hooks file") -> dict[str, list[HookCommand]]:
    if not isinstance(raw, dict):
        raise HookConfigError(f'{where}: expected an object like {{"TaskCompleted": [{{"command": "..."}}]}}')
    out: dict[str, list[HookCommand]] = {}
    for event, entries in raw.items():
        if event not in EVENTS:
            raise HookConfigError(f"{where}: unknown event {event!r}; use {' or '.join(EVENTS)}")
        if isinstance(entries, dict):
            entries = [entries]
        if not isinstance(entries, list):
            raise HookConfigError(f'{where}: {event} must be a list of {{"command": "...", "timeout": N}}')
        commands = []
        for n, entry in enumerate(entries, start=1):
            if isinstance(entry, str):
                entry = {"command": entry}
            command = entry.get("command") if isinstance(entry, dict) else None
            if not isinstance(command, str) or not command.strip():
                raise HookConfigError(f'{where}: {event} entry {n} needs a non-empty "command" string')
            timeout = entry.get("timeout", DEFAULT_TIMEOUT)
            if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= MAX_TIMEOUT:
                raise HookConfigError(
                    f"{where}: {event} entry {n} has timeout {timeout!r}; use seconds from 1 to {MAX_TIMEOUT:g}"
                )
            commands.append(HookCommand(command, float(timeout)))
        out[event] = commands
    return out


def run_command(hook: HookCommand, event: str, payload: Mapping[str, Any], cwd: Path | None = None) -> HookRun:
    """Run one command with the payload on stdin, bounded by its timeout.

    It gets its own process group, so on timeout everything it started is killed
    too (a test runner's workers included) and no pipe is left held open."""
    data = json.dumps({"event": event, **payload}, ensure_ascii=False).encode()
    env = {**os.environ, "PLANNING_MCP_EVENT": event}
    for key in ("plan", "task_id", "task_subject", "root"):
        if payload.get(key) is not None:
            env[f"PLANNING_MCP_{key.upper()}"] = str(payload[key])
    try:
        proc = subprocess.Popen(
            hook.command,
            shell=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as e:
        return HookRun(hook, None, "", error=f"could not start: {e.strerror or e}")
    try:
        out, err = proc.communicate(data, timeout=hook.timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        err = b""
        with contextlib.suppress(subprocess.TimeoutExpired, OSError, ValueError):
            _, err = proc.communicate(timeout=2)
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=2)
        return HookRun(hook, None, (err or b"").decode(errors="replace"), timed_out=True)
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    return HookRun(hook, proc.returncode, err.decode(errors="replace"), out.decode(errors="replace"))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(proc.pid, signal.SIGKILL)


def _failed(r: HookRun) -> str:
    return r.error if r.error else f"exited {r.returncode}"


def _tail_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return f": {lines[-1][:300]}" if lines else ""


def task_payload(
    root: Path | str, plan: str, plan_dir: Path | str, task_id: int, subject: str, description: str, owner: str
) -> dict[str, Any]:
    return {
        "plan": plan,
        "plan_dir": str(plan_dir),
        "root": str(root),
        "task_id": task_id,
        "task_subject": subject,
        "task_description": description,
        "owner": owner,
    }
