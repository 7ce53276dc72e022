"""The MCP Registry entry (server.json) against the registry's published schema, kept in
the repo (packaging/schemas/, the 2025-12-11 release), and in step with what it points at:
the PyPI package of pyproject.toml and the README's ownership marker the registry checks."""

from __future__ import annotations

import json
import re

import jsonschema

from tests.support.procs import REPO

from .tools import project_meta

SCHEMA = REPO / "packaging" / "schemas" / "mcp-registry-server-2025-12-11.schema.json"


def server_json() -> dict[str, object]:
    data: dict[str, object] = json.loads((REPO / "server.json").read_text(encoding="utf-8"))
    return data


def test_server_json_is_valid_against_the_registry_schema() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    data = server_json()
    assert data["$schema"] == schema["$id"]
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(data)]
    assert errors == []


def test_the_schema_catches_what_the_registry_refuses() -> None:
    """The kept schema is the real one, not a permissive stand-in: a name without its
    namespace and a description over 100 characters are refused."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    assert not validator.is_valid({**server_json(), "name": "planning-mcp"})
    assert not validator.is_valid({**server_json(), "description": "x" * 101})


def test_server_json_names_the_package_pyproject_builds_and_the_readme_marker() -> None:
    meta = project_meta()
    data = server_json()
    packages = data["packages"]
    assert isinstance(packages, list)
    (pypi,) = [p for p in packages if p["registryType"] == "pypi"]
    assert (pypi["identifier"], pypi["version"], data["version"]) == (meta["name"], meta["version"], meta["version"])
    assert pypi["transport"] == {"type": "stdio"}
    remotes = data["remotes"]
    assert isinstance(remotes, list) and remotes[0]["type"] == "streamable-http"
    assert data["repository"] == {"url": meta["urls"]["Repository"], "source": "github"}
    marker = re.search(r"<!-- mcp-name: (\S+) -->", (REPO / "README.md").read_text(encoding="utf-8"))
    assert marker and marker.group(1) == data["name"]
