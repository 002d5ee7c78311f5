"""The project's MkDocs configuration fails a build on a broken link, a missing heading and a
page left out of the nav: a small site inheriting mkdocs.yml, with one of each, must not build."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT
from tests.support.cli import mkdocs_build


def test_a_broken_link_an_unknown_anchor_and_a_page_outside_the_nav_fail_the_build(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(
        "# Home\n\n[gone](nowhere.md) and [there](other.md#no-such-heading)\n", encoding="utf-8"
    )
    (docs / "other.md").write_text("# Other\n", encoding="utf-8")
    (docs / "orphan.md").write_text("# Orphan\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        f"INHERIT: {Path(ROOT, 'mkdocs.yml')}\n"
        f"docs_dir: {docs}\n"
        "hooks: []\n"
        "nav:\n  - index.md\n  - other.md\n",
        encoding="utf-8",
    )
    done = mkdocs_build("-f", str(config), "-d", str(tmp_path / "site"), cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "strict mode" in out, out
    for name in ("nowhere.md", "no-such-heading", "orphan.md"):
        assert name in out, (name, out)
