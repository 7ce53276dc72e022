"""docs/architecture.md names every module of planning_core and server, as the code has them."""

from __future__ import annotations

import dataclasses
import re

from planning_core.models import FieldRule
from tests.support.module_map import DOC, in_document, module_list
from tests.support.procs import REPO

FIELD_GUIDE = re.compile(r"^## Adding a task field\n(?P<text>.*?)^## ", re.MULTILINE | re.DOTALL)
RULE_LIST = re.compile(r"^- .*\n(?:  .*\n)*", re.MULTILINE)  # an item, its lines
RULE_ITEM = re.compile(r"^- (?P<names>(?:`[a-z_]+`(?:, )?)+):", re.MULTILINE)


def test_the_architecture_guide_names_every_module() -> None:
    listed = in_document(DOC.read_text(encoding="utf-8"))
    assert listed is not None, "docs/architecture.md has no list of every module"
    assert listed == module_list(), (
        "docs/architecture.md's list of modules is not the code's (a module added, moved or gone, or its "
        "docstring's first sentence changed): run `python -m tests.support.module_map --write` and read the diff"
    )


def test_the_field_guide_names_every_rule_attribute_and_only_files_that_are_there() -> None:
    """The guide to adding a task field lists what a field's rule says (one item a group of
    FieldRule's attributes) and the files a field is written in and tested by."""
    guide = FIELD_GUIDE.search(DOC.read_text(encoding="utf-8"))
    assert guide, "docs/architecture.md has no section 'Adding a task field'"
    text = guide["text"]
    attributes = {f.name for f in dataclasses.fields(FieldRule)}
    items = "".join(m.group(0) for m in RULE_LIST.finditer(text))
    heads = {n for m in RULE_ITEM.finditer(text) for n in re.findall(r"`([a-z_]+)`", m["names"])}
    assert heads <= attributes, f"the guide names rule attributes FieldRule does not have: {heads - attributes}"
    missing = attributes - set(re.findall(r"`([a-z_]+)`", items))
    assert not missing, f"the guide's list of what a field's rule says leaves out {missing}"
    paths = set(re.findall(r"`((?:planning_core|server|tests)/[\w/.]+\.(?:py|js))`", text))
    assert paths and not [p for p in paths if not (REPO / p).is_file()], "the field guide names files that are gone"
