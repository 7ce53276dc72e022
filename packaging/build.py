"""Builds what the install paths carry, from the one place each thing is defined:

- `commands`: the plugin's /plan, /resume and /verify (commands/*.md) from the server's
  three prompts (server/prompts.py). A command is text for the model, so the parts a
  prompt fills in when the server renders it become instructions to read the same thing
  through the server's tools and resources. `--check` exits 1 if a committed file differs.
- `bundle`: the Claude Desktop bundle's folder (manifest.json, MCPB manifest_version 0.4,
  server type `uv`: the host runs `uv run` on the bundled pyproject.toml and sources) in
  build/mcpb/, for `mcpb validate` and `mcpb pack`.

Run from anywhere: `python packaging/build.py commands|bundle`."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COMMANDS = REPO / "commands"
BUNDLE = REPO / "build" / "mcpb"
ICON = REPO / ".claude-plugin" / "icon.png"
PLANS_SETTING = "plans_folder"

ACTIVE_PLANS = "The active plans: read the server's `plans://active` resource, or call PlanList."
READY_TASKS = 'Call TaskList with status "ready" on each active plan.'
PLAN_TEXT = (
    "Read plan.md and the task board: the server's `plans://<name>` resource (or TaskList and TaskGet on the plan)."
)


def command_texts() -> dict[str, str]:
    sys.path.insert(0, str(REPO))
    from server import prompts

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
        print(f"commands/ differ from server/prompts.py: {', '.join(stale)}; run python packaging/build.py commands")
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


def build_bundle(out: Path = BUNDLE) -> Path:
    """The bundle's folder: manifest, pyproject.toml (uv installs its dependencies), the
    README and licence texts it names, and the sources (tests and benchmarks left out)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / "manifest.json").write_text(json.dumps(manifest(), indent=2) + "\n", encoding="utf-8")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, out / name)
    shutil.copy2(ICON, out / "icon.png")
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in ("planning_core", "server"):
        shutil.copytree(REPO / package, out / package, ignore=skip)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = p.add_subparsers(dest="what", required=True)
    c = sub.add_parser("commands", help="write commands/*.md from server/prompts.py")
    c.add_argument("--check", action="store_true", help="exit 1 if a committed command differs")
    b = sub.add_parser("bundle", help="write the MCPB folder (then: mcpb pack build/mcpb planning-mcp-VERSION.mcpb)")
    b.add_argument("--out", type=Path, default=BUNDLE, help="the folder to write (default: build/mcpb)")
    args = p.parse_args(argv)
    if args.what == "commands":
        return write_commands(args.check)
    print(build_bundle(args.out.absolute()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
