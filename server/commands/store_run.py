"""A command's work on the one store it opens (`serve`, `status`): what says the command
cannot run as configured (a root that cannot be used, a bad hooks file, a port in use) is
one line on stderr and exit 2, and the store is closed after, whatever happened."""

from __future__ import annotations

import sys
from collections.abc import Callable

from planning_core import PlanningError
from planning_core.events import HookConfigError
from planning_core.store import PlanStore

from ..common.cli_common import EXIT_CONFIG
from ..common.exposure import ServeError
from ..common.store_choice import StoreChoice, StoreChoiceError
from .views import ViewError


def run_on_store(
    choice: StoreChoice, open_store: Callable[[StoreChoice], PlanStore], work: Callable[[PlanStore], int]
) -> int:
    store: PlanStore | None = None
    try:
        store = open_store(choice)
        return work(store)
    except (StoreChoiceError, ServeError, HookConfigError, PlanningError, ViewError) as e:
        print(f"planning-mcp: {e}", file=sys.stderr)
        return EXIT_CONFIG
    except BrokenPipeError:
        raise  # stdout's reader left: main's quiet exit, not a problem with the root
    except OSError as e:
        print(
            f"planning-mcp: {e} (plans in {choice.shown}; pass --root DIR or --store URL to use another)",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    finally:
        if store is not None:
            store.close()
