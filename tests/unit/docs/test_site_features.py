"""What a reader of the built site meets besides the text: the version, edit links, a sitemap, a
dark-mode toggle, user pages apart from contributor pages, warnings set apart as admonitions,
and copy buttons that copy a console example's commands without its prompts or output."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from devtools.console_copy import commands, with_copy_text
from tests.conftest import ROOT
from tests.unit.docs.site_pages import built_page, page_sections

COPY = re.compile(r'<div class="language-console highlight"[^>]*? data-copy="(?P<copy>[^"]*)"')
CONSOLE = re.compile(r'<div class="language-console highlight"')
# Warnings a reader must not miss, each an admonition: (page, kind, the words of its title).
WARNINGS = [
    ("metrics/gecko-image", "warning", "is refused on the 2.5 models"),
    ("operations/upgrades", "warning", "Upgrade every host together"),
    ("getting-started/one-machine", "note", "SIMULATED results"),
    ("getting-started/vertex-ai", "note", "SIMULATED results"),
    ("metrics/gecko-video", "note", "SIMULATED results"),
    ("guides/your-own-data", "note", "SIMULATED results"),
    ("concepts/cost", "warning", "Vertex AI bills its own"),
    ("guides/batch-mode", "warning", "A batch already sent is paid for"),
    ("operations/security", "warning", "have no login"),
]


def config() -> dict[str, Any]:
    """mkdocs.yml as data (it holds no Python tags)."""
    loaded: dict[str, Any] = yaml.safe_load(Path(ROOT, "mkdocs.yml").read_text(encoding="utf-8"))
    return loaded


def copied(page_html: str) -> list[str]:
    return [html.unescape(m.group("copy")) for m in COPY.finditer(page_html)]


def test_a_console_session_copies_as_its_commands() -> None:
    session = (
        "$ evalq run pointwise a.jsonl \\\n"
        "    --wait\n"
        "job 1a2b finished\n"
        "$ evalq status 1a2b   # exits 0\n"
        "│ rows │ 3 │\n"
    )
    assert (
        commands(session)
        == "evalq run pointwise a.jsonl \\\n    --wait\nevalq status 1a2b   # exits 0"
    )
    block = (
        '<div class="language-console highlight"><pre><span></span><code>'
        '<span class="gp">$ </span>echo<span class="w"> </span>&quot;a &lt; b&quot;\n'
        '<span class="go">a &lt; b</span>\n</code></pre></div>'
    )
    assert copied(with_copy_text(block)) == ['echo "a < b"']
    assert with_copy_text(with_copy_text(block)) == with_copy_text(block)


def test_materials_copy_button_copies_a_blocks_data_copy() -> None:
    """The theme's own script reads the attribute: a theme that stops doing so fails here."""
    import material

    bundles = list(Path(material.__file__).parent.glob("templates/assets/javascripts/bundle.*.js"))
    assert bundles, "Material's script bundle not found"
    assert any('closest("[data-copy]")' in b.read_text(encoding="utf-8") for b in bundles)
    assert "content.code.copy" in config()["theme"]["features"]


def test_every_console_example_copies_without_prompts_or_output(built_site: Path) -> None:
    pages = [p for p in built_site.rglob("index.html") if CONSOLE.search(p.read_text("utf-8"))]
    assert len(pages) >= 5, pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        found = copied(text)
        assert len(found) == len(CONSOLE.findall(text)), page
        for copy in found:
            assert copy and not any(line.startswith("$ ") for line in copy.splitlines()), copy
    noise = copied(built_page(built_site, "concepts/noise-floor"))
    assert any(c.startswith("printf ") for c in noise), noise
    assert not any("│" in c or "..." in c.splitlines() for c in noise), noise


def test_the_footer_names_the_version(built_site: Path) -> None:
    from evalq import __version__

    for page in ("", "reference/cli/", "changelog/"):
        footer = (built_site / page / "index.html").read_text(encoding="utf-8")
        assert f"evalq {__version__}" in footer, page


def test_pages_have_edit_links_and_a_sitemap(built_site: Path) -> None:
    site_url, repo_url = config()["site_url"], config()["repo_url"]
    cost = built_page(built_site, "concepts/cost")
    assert f'href="{repo_url}/edit/main/docs/concepts/cost.md"' in cost
    sitemap = (built_site / "sitemap.xml").read_text(encoding="utf-8")
    assert f"<loc>{site_url}concepts/cost/</loc>" in sitemap


def test_the_reader_can_switch_to_dark_mode() -> None:
    palette = config()["theme"]["palette"]
    assert {p["scheme"] for p in palette} == {"default", "slate"}
    assert all(p["toggle"]["name"] for p in palette)


def test_contributor_pages_are_a_section_of_their_own() -> None:
    nav = config()["nav"]
    sections = {next(iter(item)): next(iter(item.values())) for item in nav}
    contributing = {next(iter(p.values())) for p in sections["Contributing"]}
    architecture = {
        p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs/architecture").glob("*.md")
    }
    assert contributing == architecture
    assert sections["Changelog"] == "changelog.md"


@pytest.mark.parametrize("page, kind, title", WARNINGS, ids=[f"{p}:{t}" for p, _, t in WARNINGS])
def test_a_warning_is_an_admonition(built_site: Path, page: str, kind: str, title: str) -> None:
    text = built_page(built_site, page)
    titles = re.findall(
        rf'<div class="admonition {kind}">\s*<p class="admonition-title">(.*?)</p>', text, re.S
    )
    assert any(title in re.sub(r"<[^>]+>", "", t) for t in titles), (page, titles)
    # The readers of the other checks see an admonition's words as the section's text.
    assert any(title in s.words() for s in page_sections(text))
