"""Which store a command uses: `--store URL`, else `--root DIR`, else $PLANNING_MCP_STORE,
else $PLANNING_MCP_ROOT, else the default root where the command runs
(server/common/default_root.py). Paths and `file:` URLs are the file store; `postgresql://…` the
database; `memory:` this process.

A folder that is likely not the one meant is refused, never served empty or filled with
todo/ and done/: a project folder whose plans are in its `.planning`, a folder of other
files, a root whose parent folder does not exist (PlanFolders.root_mistake).

A root a client config left unedited (a placeholder, an unexpanded variable, a Windows
path) is refused: taken as given it would silently become a new folder somewhere
unexpected. Passwords in URLs are never printed (stores.redact)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from planning_core import PlanningError
from planning_core.store import STORE_ENV, PlanFolders, PlanStore
from planning_core.stores import MEMORY_URL, DatabaseUrl, is_conninfo, is_database_url, open_store, redact

from .default_root import DefaultRoot, default_root

if TYPE_CHECKING:  # the Claude Code hook reads its plain command line without argparse (entry.py)
    import argparse

ROOT_ENV = "PLANNING_MCP_ROOT"
ROOT_PLACEHOLDER = "/ABSOLUTE/PATH"  # README's and mcp.json.example's text, to be replaced by the user
ROOT_HELP = (
    "planning folder (default: $PLANNING_MCP_ROOT, else .planning in the git repository's main worktree, "
    "else the nearest .planning here or above, else ./.planning)"
)
STORE_HELP = (
    "where the plans are: a folder, file:PATH, or postgresql://user@host/db (default: $PLANNING_MCP_STORE, else --root)"
)


class StoreChoiceError(Exception):
    """One line saying what is wrong with the configured store and what to do."""


@dataclass(frozen=True)
class StoreChoice:
    """The store a command was told to use, before anything is opened."""

    url: str  # a folder (absolute) or a URL, as open_store takes it
    folder: Path | None  # the file store's root; None for other stores
    given: str = ""  # where it came from, to start a message: "--root ", "PLANNING_MCP_ROOT=", "" (the default)
    why: str = ""  # why the default root is this folder (the startup line says it)
    note: str | None = None  # one line for stderr: the default root's git files could not be followed

    @property
    def shown(self) -> str:
        return str(self.folder) if self.folder is not None else redact(self.url)

    @property
    def described(self) -> str:
        """Where the plans are, and why there when the default chose it."""
        return f"{self.shown} ({self.why})" if self.why else self.shown

    def open(self) -> PlanStore:
        return open_store(self.url)


def add_store_arguments(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """--store and --root on a (sub)command; a subcommand's own win over the top level's."""
    prefix = "" if top else "sub_"
    parser.add_argument("--store", dest=f"{prefix}store", metavar="URL", help=STORE_HELP)
    parser.add_argument("--root", dest=f"{prefix}root", metavar="DIR", help=ROOT_HELP)


def choose(args: argparse.Namespace) -> StoreChoice:
    store = getattr(args, "sub_store", None) or getattr(args, "store", None)
    root = getattr(args, "sub_root", None) or getattr(args, "root", None)
    return resolve(store, root, lambda: default_root(Path.cwd()))


def resolve(store: str | None, root: str | None, default: Callable[[], DefaultRoot]) -> StoreChoice:
    """The one order every command (and the Claude Code hook) follows: --store, --root,
    $PLANNING_MCP_STORE, $PLANNING_MCP_ROOT, else `default()` (the default root where the
    command runs)."""
    if store and root:
        raise StoreChoiceError("give --store or --root, not both (--root DIR is --store DIR)")
    if store:
        return from_text(store, "--store ")
    if root:
        return from_text(root, "--root ")
    env_store, env_root = os.environ.get(STORE_ENV), os.environ.get(ROOT_ENV)
    if env_store:
        return from_text(env_store, f"{STORE_ENV}=")
    if env_root:
        return from_text(env_root, f"{ROOT_ENV}=")
    found = default()
    return StoreChoice(str(found.folder), found.folder, why=found.why, note=found.note)


def from_text(raw: str, given: str) -> StoreChoice:
    if is_database_url(raw):
        problem = DatabaseUrl.parse(raw).problem()
        if problem:
            raise StoreChoiceError(f"{given}{redact(raw)} {problem}; write postgresql://user@host:5432/dbname")
        return StoreChoice(raw, None, given)
    if is_conninfo(raw):
        raise StoreChoiceError(
            f"{given}{redact(raw)} is a PostgreSQL connection string in keyword=value form, which is "
            "not accepted (nor taken for a folder); write it as a URL: postgresql://user@host:5432/dbname"
            " (the password in PGPASSWORD or ~/.pgpass)"
        )
    if raw == MEMORY_URL:
        return StoreChoice(raw, None, given)
    path_text = urlsplit(raw).path if raw.startswith("file:") else raw
    problem = root_problem(path_text)
    if problem:
        example = Path.home() / "myproject" / ".planning"
        raise StoreChoiceError(
            f"{given}{raw} {problem}; in your MCP client's config, write the absolute path of "
            f"your project's .planning folder instead (e.g. {example})"
        )
    folder = Path(path_text).expanduser().absolute()
    return StoreChoice(str(folder), folder, given)


def root_problem(raw: str) -> str | None:
    if "${" in raw:
        return "holds an unexpanded ${...} variable (this client does not expand it)"
    if ROOT_PLACEHOLDER in raw:
        return f"is the example's placeholder ({ROOT_PLACEHOLDER} was never replaced)"
    if "\\" in raw and os.sep == "/":
        return "holds a backslash (a Windows path?), which here would name one folder, backslashes and all"
    return None


def open_for_reading(choice: StoreChoice) -> PlanStore:
    """A store for a read command: a folder must exist (a typo in --root is an error,
    never a new empty folder); a database must be reachable."""
    if choice.folder is not None and not choice.folder.is_dir():
        raise StoreChoiceError(
            f"no planning folder at {choice.folder}; run from your project folder, or pass --root DIR "
            "(or set PLANNING_MCP_ROOT) to where the server keeps its plans"
        )
    store = choice.open()
    refuse_mistaken_root(store, choice, creating=False)
    if choice.folder is None:
        prepare(store, choice)
    return store


def open_for_writing(choice: StoreChoice) -> PlanStore:
    store = choice.open()
    refuse_mistaken_root(store, choice, creating=True)
    prepare(store, choice)
    return store


def refuse_mistaken_root(store: PlanStore, choice: StoreChoice, *, creating: bool) -> None:
    mistake = store.root_mistake(creating=creating) if isinstance(store, PlanFolders) else None
    if mistake:
        store.close()
        raise StoreChoiceError(f"{choice.given}{choice.shown} {mistake}")


def prepare(store: PlanStore, choice: StoreChoice) -> None:
    try:
        store.prepare()
    except PlanningError as e:
        store.close()
        if choice.folder is not None:
            raise StoreChoiceError(
                f"cannot use planning root {choice.folder} (not creatable or not writable); "
                "set --root DIR or PLANNING_MCP_ROOT to a writable folder"
            ) from None
        raise StoreChoiceError(f"cannot use the store {choice.shown}: {e}") from None
