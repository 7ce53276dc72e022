"""Checks: commands the person running the server defined, run before a task counts as done.

A task names a check in its acceptance criteria (`check:tests`, models.check_named); the
command is the check file's, never the model's. The check file is `checks.toml` in the
planning root (`.planning/checks.toml`; with a store that has no folder, the one under the
server's working directory):

    [checks.tests]
    command = "pytest -q tests/auth"   # run by /bin/sh in the project folder
    timeout = 120                      # seconds, 1-3600 (default 60)

The file may sit in a work tree and come from someone else's branch, so a command in it is
theirs to choose: a check runs only while the file's exact content is trusted by the person
running the server (`planning-mcp checks trust` records its SHA-256 outside every work tree,
in the user's configuration folder). Changed content is untrusted again until trusted again.

Reading never blocks or reads too much (fileio.regular: a FIFO, a symbolic link, a file over
MAX_CHECK_FILE_BYTES are refused with the reason). A run is bounded in time (its timeout,
then its whole process group is killed) and in memory (the last OUTPUT_KEPT_BYTES of its
output are kept; the last SHOWN_LINES of those are shown).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import signal
import subprocess
import threading
import time
import tomllib
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from . import safetext, times
from .checks import CHECK_NAME
from .errors import PlanningError
from .fileio.atomic import replace_many
from .fileio.regular import UnreadableFile, read_regular

if TYPE_CHECKING:
    from .models import Task

CHECK_FILE = "checks.toml"
PLANNING_FOLDER = ".planning"  # a project's planning root, where a store has no folder of its own
MAX_CHECK_FILE_BYTES = 64 * 1024
MAX_CHECKS = 100
MAX_COMMAND = 4000  # characters of one command
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
OUTPUT_KEPT_BYTES = 64 * 1024  # the tail of a run's output held while it runs
SHOWN_LINES = 30  # of that tail, the lines a refusal and the task's record show
SHOWN_CHARS = 3000
# How long TaskUpdate waits for its checks before answering that they still run (clients
# give up on a tool call after their own timeout, often 10 s or more); the run goes on.
ANSWER_WITHIN = 8.0
TRUST_ENV = "XDG_CONFIG_HOME"
TRUST_FILE = "trusted-checks.json"
MAX_TRUST_FILE_BYTES = 1024 * 1024
KILL_WAIT = 5.0  # seconds to reap a killed group's shell


class VerificationSuperseded(PlanningError):
    """A run's result came after the task's record moved on (another run began, or the task
    is gone): it is not written."""


class ChecksUnavailable(PlanningError):
    """The checks a task names cannot be run: no file, an unreadable or untrusted one, a name
    it does not define. Nothing was changed."""


@dataclass(frozen=True)
class Check:
    name: str
    command: str
    timeout: float


@dataclass(frozen=True)
class CheckRun:
    """One run of one check: its exit code (None when it was killed or could not start)."""

    check: Check
    exit_code: int | None
    output: str  # the last SHOWN_LINES lines, escaped for a model and a terminal
    seconds: float
    timed_out: bool = False
    error: str = ""  # why it could not start

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    def outcome(self) -> str:
        """`passed`, `exit 1`, `timed out after 120 s`, `could not start: …`."""
        if self.error:
            return f"could not start: {self.error}"
        if self.timed_out:
            return f"timed out after {self.check.timeout:g} s and was stopped"
        return "passed" if self.passed else f"exit {self.exit_code}"


# -- the task's record of its checks -------------------------------------------------------
# Task.verification, written by the server only: {"state": RUNNING|PASSED|FAILED|INTERRUPTED,
# "checks": [names], "run": id, "at": UTC time, "until": (RUNNING) when the run is surely over,
# "check", "command", "result", "output": (FAILED) the check that failed, how, its output's tail}.

RUNNING = "running"
PASSED = "passed"
FAILED = "failed"
INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class Verification:
    """A record to write on a task; `follows`: the run the task's record must still be
    (a result written only over its own run's record)."""

    record: dict[str, Any]
    follows: str | None = None

    def apply(self, task: Task) -> None:
        if self.follows is not None and (task.verification or {}).get("run") != self.follows:
            raise VerificationSuperseded(f"Task #{task.id}'s checks were started again; this run's result is dropped.")
        task.verification = dict(self.record)


def describe(record: Mapping[str, Any] | None) -> str:
    """A record in a few words: `tests, lint: running until 10:03Z`, `tests: passed`,
    `tests, lint: lint failed (exit 1)`, `tests: interrupted`. Escaped (the record is read from a file)."""
    if not record:
        return ""
    names = record.get("checks")
    checks = ", ".join(str(n) for n in names) if isinstance(names, list) else "?"
    state = str(record.get("state", "?"))
    if state == RUNNING:
        state += f" until {str(record.get('until', '?'))[11:16]}Z"
    elif state == FAILED and "check" in record:
        state = f"{record['check']} failed ({record.get('result', '?')})"
    elif state == FAILED:
        state = str(record.get("result", FAILED))
    return safetext.escape(f"{checks}: {state}")


def is_running(record: Mapping[str, Any] | None, now: dt.datetime) -> bool:
    """Whether a record says its checks run now (`running`, and its `until` still to come)."""
    if not record or record.get("state") != RUNNING:
        return False
    until = times.parse_utc(str(record.get("until", "")))  # a hand-written time without a zone is UTC's
    return until is not None and until > now


def mark(record: Mapping[str, Any] | None) -> str:
    """What a TaskList line adds for an unfinished task's checks: ` (checks running)`,
    ` (checks failed)`, ` (checks interrupted)`; "" otherwise."""
    state = (record or {}).get("state")
    return f" (checks {state})" if state in (RUNNING, FAILED, INTERRUPTED) else ""


def interrupted_record(record: Mapping[str, Any]) -> dict[str, Any]:
    return {**{k: v for k, v in record.items() if k != "until"}, "state": INTERRUPTED}


# -- the check file ---------------------------------------------------------------------


def parse(raw: bytes, where: str) -> dict[str, Check]:
    """The checks a check file defines; ChecksUnavailable saying what to fix."""
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ChecksUnavailable(
            f"{where} is not valid TOML ({safetext.escape(str(e))}); ask the user to fix it."
        ) from None
    table = doc.get("checks", {})
    if not isinstance(table, dict) or len(table) > MAX_CHECKS:
        raise ChecksUnavailable(
            f'{where}: expected up to {MAX_CHECKS} tables like [checks.tests] with command = "…"; '
            "ask the user to fix it."
        )
    return {name: _check(name, entry, where) for name, entry in table.items()}


def _check(name: str, entry: Any, where: str) -> Check:
    bad = f"{where}: [checks.{safetext.escape(name)}]"
    if not CHECK_NAME.fullmatch(name):
        raise ChecksUnavailable(f"{bad} is not a check name (letters, digits, _ . -); ask the user to rename it.")
    command = entry.get("command") if isinstance(entry, dict) else None
    if not isinstance(command, str) or not command.strip() or len(command) > MAX_COMMAND:
        raise ChecksUnavailable(f'{bad} needs command = "…" (1-{MAX_COMMAND} characters); ask the user to fix it.')
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 1 <= timeout <= MAX_TIMEOUT:
        raise ChecksUnavailable(f"{bad} timeout must be seconds from 1 to {MAX_TIMEOUT:g}; ask the user to fix it.")
    return Check(name, command, float(timeout))


def trust_file() -> Path:
    """Where trusted check files are recorded: the user's configuration folder, outside
    every work tree (so no branch can trust its own commands)."""
    base = os.environ.get(TRUST_ENV) or str(Path.home() / ".config")
    return Path(base) / "planning-mcp" / TRUST_FILE


def _trusted() -> dict[str, str]:
    try:
        raw = read_regular(trust_file(), MAX_TRUST_FILE_BYTES, "the trusted checks file")
        doc = json.loads(raw)
    except (FileNotFoundError, UnreadableFile, ValueError, OSError):
        return {}
    return {k: v for k, v in doc.items() if isinstance(v, str)} if isinstance(doc, dict) else {}


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


@dataclass(frozen=True)
class CheckFile:
    """The check file of one planning root, and the project folder its commands run in."""

    path: Path
    project: Path

    def read(self) -> bytes:
        try:
            return read_regular(self.path, MAX_CHECK_FILE_BYTES, "a check file")
        except FileNotFoundError:
            raise ChecksUnavailable(
                f"No checks are defined: {self.path} does not exist. Ask the user to define them there "
                '([checks.NAME] command = "…") or remove the check:NAME criteria.'
            ) from None
        except (UnreadableFile, OSError) as e:
            reason = e.reason if isinstance(e, UnreadableFile) else str(e)
            raise ChecksUnavailable(f"{self.path} cannot be read: {reason}. Ask the user to fix it.") from None

    def load(self) -> dict[str, Check]:
        """The defined checks, whether trusted or not."""
        return parse(self.read(), str(self.path))

    def trusted(self) -> bool:
        """Whether the file's content now is the content the user trusted."""
        return _trusted().get(str(self.path.resolve())) == digest(self.read())

    def trust(self) -> tuple[str, dict[str, Check]]:
        """Record the file's current content as trusted: its digest and its checks. (The CLI's.)"""
        raw = self.read()
        checks = parse(raw, str(self.path))
        found = digest(raw)
        trusted = {**_trusted(), str(self.path.resolve()): found}
        target = trust_file()
        target.parent.mkdir(parents=True, exist_ok=True)
        replace_many([(target, (json.dumps(trusted, indent=2, sort_keys=True) + "\n").encode())])
        return found, checks

    @classmethod
    def of_root(cls, root: Path | None) -> CheckFile:
        """The check file of a plans' root (`.planning/checks.toml`), its commands run in the
        project folder (the root's parent); for a store without a root, the ones under the
        working directory."""
        if root is None:
            here = Path.cwd()
            return cls(here / PLANNING_FOLDER / CHECK_FILE, here)
        return cls(root / CHECK_FILE, root.parent)

    def resolve(self, names: Iterable[str]) -> list[Check]:
        """The checks named, in order, from the trusted file; ChecksUnavailable naming the
        undefined ones (the defined ones listed), or saying why none can run."""
        names = list(names)
        raw = self.read()
        checks = parse(raw, str(self.path))
        self._refuse_undefined(names, checks)
        if _trusted().get(str(self.path.resolve())) != digest(raw):
            raise ChecksUnavailable(
                f"The checks in {self.path} are not trusted (new, or changed since trusted): a command runs "
                "only after the user reviews the file and runs `planning-mcp checks trust`. Ask the user to. "
                "The task was not completed."
            )
        return [checks[n] for n in names]

    def check_names(self, names: Iterable[str]) -> None:
        """ChecksUnavailable when a name is not defined (trust is asked only when they run)."""
        names = list(names)
        if names:
            self._refuse_undefined(names, self.load())

    def _refuse_undefined(self, names: list[str], checks: Mapping[str, Check]) -> None:
        missing = [n for n in names if n not in checks]
        if missing:
            defined = ", ".join(sorted(checks)) or "none"
            raise ChecksUnavailable(
                f"Unknown check {', '.join(safetext.escape(n) for n in missing)}: {self.path} defines {defined}. "
                "Name one of those (check:NAME); a command is never taken from a task. Nothing was changed."
            )


# -- running -------------------------------------------------------------------------


class Runs:
    """The process groups of the checks running now, so a server that stops kills them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: set[int] = set()

    def add(self, pgid: int) -> None:
        with self._lock:
            self._groups.add(pgid)

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)

    def kill_all(self) -> None:
        with self._lock:
            groups = list(self._groups)
        for pgid in groups:
            _kill_group(pgid)


def run_check(check: Check, cwd: Path, runs: Runs | None = None) -> CheckRun:
    """Run one check by /bin/sh in `cwd`, stdin empty, stdout and stderr together, bounded
    by its timeout (then its process group is killed) and OUTPUT_KEPT_BYTES of output."""
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            check.command,
            shell=True,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as e:
        return CheckRun(check, None, "", 0.0, error=safetext.escape(e.strerror or str(e)))
    if runs is not None:
        runs.add(proc.pid)
    tail: deque[bytes] = deque()
    assert proc.stdout is not None
    reader = threading.Thread(target=_keep_tail, args=(proc.stdout, tail), daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=check.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        # The shell may have exited with its children still holding the pipe: the group goes too.
        _kill_group(proc.pid)
        if runs is not None:
            runs.discard(proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=KILL_WAIT)
        reader.join(timeout=KILL_WAIT)
    code = None if timed_out else proc.returncode
    return CheckRun(check, code, shown(b"".join(tail)), time.monotonic() - started, timed_out=timed_out)


def _keep_tail(stream: IO[bytes], tail: deque[bytes]) -> None:
    kept = 0
    with contextlib.suppress(OSError, ValueError):
        while chunk := stream.read1(OUTPUT_KEPT_BYTES):  # type: ignore[attr-defined]
            tail.append(chunk)
            kept += len(chunk)
            while kept - len(tail[0]) >= OUTPUT_KEPT_BYTES:
                kept -= len(tail.popleft())
    with contextlib.suppress(OSError):
        stream.close()


def shown(output: bytes) -> str:
    """The last SHOWN_LINES lines (at most SHOWN_CHARS) of a run's output, escaped."""
    lines = output.decode("utf-8", errors="replace").rstrip().splitlines()[-SHOWN_LINES:]
    text = safetext.escape("\n".join(lines), multiline=True)
    return text if len(text) <= SHOWN_CHARS else "…" + text[-SHOWN_CHARS:]


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(pgid, signal.SIGKILL)
