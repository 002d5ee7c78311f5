"""The documentation site, built in strict mode into a temporary folder, as scripts/test builds
it: the checks here read what a reader gets, not the Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import mkdocs_build


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Module-scoped, not session-scoped: a module fixture keeps the module's tests on one test
    process (tests/conftest.py groups them for xdist), so a run builds the site once; a session
    fixture is built again by each process that draws one of them."""
    site = tmp_path_factory.mktemp("site")
    done = mkdocs_build("--strict", "--quiet", "--site-dir", str(site))
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}"
    return site
