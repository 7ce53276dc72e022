"""docs/architecture.md names every module of planning_core and server, as the code has them."""

from __future__ import annotations

from tests.support.module_map import DOC, in_document, module_list


def test_the_architecture_guide_names_every_module() -> None:
    listed = in_document(DOC.read_text(encoding="utf-8"))
    assert listed is not None, "docs/architecture.md has no list of every module"
    assert listed == module_list(), (
        "docs/architecture.md's list of modules is not the code's (a module added, moved or gone, or its "
        "docstring's first sentence changed): run `python -m tests.support.module_map --write` and read the diff"
    )
