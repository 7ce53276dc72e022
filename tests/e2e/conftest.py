"""`store_url`: the end-to-end tests that drive a server child only through MCP run once
per backend a child can be given (ids: files, postgres; memory lives in one process only,
see tests/support/store_urls.py). A test that looks at files keeps `tmp_path / "root"`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import store_urls


@pytest.fixture(params=store_urls.SERVED_KINDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store for server children: a folder under tmp_path, or a fresh database."""
    return store_urls.store_url(str(request.param), tmp_path)
