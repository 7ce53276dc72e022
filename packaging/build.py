"""Builds what the install paths carry, from the one place each thing is defined:

- `commands`: the plugin's /plan, /resume and /verify (commands/*.md) from the server's
  three prompts (server/mcp/prompts.py). A command is text for the model, so the parts a
  prompt fills in when the server renders it become instructions to read the same thing
  through the server's tools and resources. `--check` exits 1 if a committed file differs.
- `bundle`: the Claude Desktop bundle, build/planning-mcp-VERSION.mcpb (manifest.json, MCPB
  manifest_version 0.4, server type `uv`: the host runs `uv run` on the bundled
  pyproject.toml and sources). Written here as `mcpb pack` writes one (a zip: each file
  under its path, deflated at level 9, with its Unix permissions), so no Node is needed;
  tests/hosts/test_packages.py checks it with the MCP Bundle CLI itself.

Run from anywhere: `python packaging/build.py commands|bundle`."""

from __future__ import annotations

import argparse
import json
import stat
import sys
import time
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COMMANDS = REPO / "commands"
BUILD = REPO / "build"
ICON = REPO / ".claude-plugin" / "icon.png"
PLANS_SETTING = "plans_folder"

ACTIVE_PLANS = "The active plans: read the server's `plans://active` resource, or call PlanList."
READY_TASKS = 'Call TaskList with status "ready" on each active plan.'
PLAN_TEXT = (
    "Read plan.md and the task board: the server's `plans://<name>` resource (or TaskList and TaskGet on the plan)."
)


def command_texts() -> dict[str, str]:
    sys.path.insert(0, str(REPO))
    from server.mcp import prompts

    def page(description: str, hint: str | None, body: str) -> str:
        head = [f"description: {description}"] + ([f"argument-hint: {hint}"] if hint else [])
        return "---\n" + "\n".join(head) + "\n---\n\n" + body + "\n"

    return {
        "plan.md": page(
            "Plan mode: explore read-only, then a plan for your review, then PlanCreate.",
            "<task>",
            prompts.PLAN_MODE.format(task="$ARGUMENTS"),
        ),
        "resume.md": page(
            "Resume from the plans on disk: the active plans and the tasks ready now.",
            None,
            prompts.RESUME.format(active=ACTIVE_PLANS, ready=READY_TASKS),
        ),
        "verify.md": page(
            "The three checks before a plan is archived; failures go back to the task.",
            "[plan]",
            prompts.VERIFY.format(name="$ARGUMENTS (default: the current plan)", plan=PLAN_TEXT),
        ),
    }


def write_commands(check: bool) -> int:
    stale = []
    for name, text in command_texts().items():
        path = COMMANDS / name
        if check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
            continue
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if stale:
        print(
            f"commands/ differ from server/mcp/prompts.py: {', '.join(stale)}; run python packaging/build.py commands"
        )
        return 1
    return 0


def project() -> dict[str, object]:
    with (REPO / "pyproject.toml").open("rb") as f:
        meta: dict[str, object] = tomllib.load(f)["project"]
    return meta


def manifest() -> dict[str, object]:
    meta = project()
    urls = meta["urls"]
    assert isinstance(urls, dict)
    return {
        "$schema": "https://raw.githubusercontent.com/anthropics/mcpb/main/schemas/mcpb-manifest-v0.4.schema.json",
        "manifest_version": "0.4",
        "name": meta["name"],
        "display_name": "Planning",
        "version": meta["version"],
        "description": meta["description"],
        "author": {"name": "planning-mcp maintainers"},
        "repository": {"type": "git", "url": urls["Repository"]},
        "homepage": urls["Homepage"],
        "documentation": urls["Documentation"],
        "support": urls["Issues"],
        "icon": "icon.png",
        "license": meta["license"],
        "keywords": ["planning", "tasks", "plans", "agents"],
        "server": {
            "type": "uv",
            "entry_point": "server/__main__.py",
            "mcp_config": {
                "command": "uv",
                "args": [
                    "run",
                    "--quiet",
                    "--directory",
                    "${__dirname}",
                    "planning-mcp",
                    "--root",
                    f"${{user_config.{PLANS_SETTING}}}",
                ],
            },
        },
        "user_config": {
            PLANS_SETTING: {
                "type": "directory",
                "title": "Plans folder",
                "description": "Where the plans are kept: usually your project's .planning folder. "
                "It is created on the first plan.",
                "required": True,
            }
        },
        "prompts_generated": False,
        "tools_generated": False,
        "compatibility": {"platforms": ["darwin", "win32", "linux"], "runtimes": {"python": ">=3.11"}},
    }


def bundle_name() -> str:
    """The file name `mcpb pack` gives a bundle: <name>-<version>.mcpb."""
    meta = project()
    return f"{meta['name']}-{meta['version']}.mcpb"


def bundle_files() -> Iterator[tuple[str, Path]]:
    """What the bundle holds besides its manifest, by path in it: pyproject.toml (uv installs
    its dependencies), the README and licence texts it names, the icon, and the sources
    (tests and benchmarks left out)."""
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        yield name, REPO / name
    yield "icon.png", ICON
    for package in ("planning_core", "server"):
        for path in sorted((REPO / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                yield path.relative_to(REPO).as_posix(), path


def _entry(name: str, mode: int, when: tuple[int, ...]) -> zipfile.ZipInfo:
    """A member as mcpb's packer makes it: deflated, made on Unix, its permission bits."""
    info = zipfile.ZipInfo(name, date_time=when[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3
    info.external_attr = (stat.S_IMODE(mode) & 0o777) << 16
    return info


def build_bundle(out: Path | None = None) -> Path:
    """The .mcpb file (default build/<name>-<version>.mcpb), written whole or not at all."""
    target = out or BUILD / bundle_name()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    when = time.localtime()
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr(_entry("manifest.json", 0o644, when), json.dumps(manifest(), indent=2) + "\n")
        for name, path in bundle_files():
            z.writestr(_entry(name, path.stat().st_mode, when), path.read_bytes())
    partial.replace(target)
    return target


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = p.add_subparsers(dest="what", required=True)
    c = sub.add_parser("commands", help="write commands/*.md from server/mcp/prompts.py")
    c.add_argument("--check", action="store_true", help="exit 1 if a committed command differs")
    b = sub.add_parser("bundle", help="write the Claude Desktop bundle, build/planning-mcp-VERSION.mcpb")
    b.add_argument("--out", type=Path, help="the .mcpb file to write (default: build/planning-mcp-VERSION.mcpb)")
    args = p.parse_args(argv)
    if args.what == "commands":
        return write_commands(args.check)
    print(build_bundle(args.out.absolute() if args.out else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
