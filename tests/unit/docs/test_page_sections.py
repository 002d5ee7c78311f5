"""A long page a reader can scan and link to: every page of the manual over 600 words of prose has
at least one `##` or `###` heading per 600 words, so its contents list is a map of the page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

WORDS_PER_HEADING = 600
# Pages still waiting for their sections, each to leave this tuple when it has them: the test
# names a page here that has enough headings, so the tuple can only shrink.
NOT_YET: tuple[str, ...] = ()
DOCS = Path(ROOT, "docs")
PAGES = sorted(path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md"))
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
HEADING = re.compile(r"^#{2,3} \S")


def prose_and_headings(markdown: str) -> tuple[int, int]:
    """The words outside code blocks and HTML comments, and the `##`/`###` headings among them."""
    markdown = re.sub(r"<!--.*?-->", "", markdown, flags=re.DOTALL)
    words = headings = 0
    fence: str | None = None
    for line in markdown.splitlines():
        opened = FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1).startswith(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        headings += bool(HEADING.match(line))
        words += len(line.split())
    return words, headings


def too_few_headings(markdown: str) -> str | None:
    words, headings = prose_and_headings(markdown)
    if headings < words // WORDS_PER_HEADING:
        return f"{words} words of prose and {headings} headings (one per {WORDS_PER_HEADING})"
    return None


def test_the_count_skips_code_and_finds_a_wall_of_text() -> None:
    code = "```console\n" + "$ evalq run word\n" * 400 + "```\n"
    assert prose_and_headings(f"# Title\n\nOne two three.\n\n{code}## A part\n") == (8, 1)
    assert prose_and_headings("    ~~~\n    ## not a heading\n    ~~~\n#### deep\n") == (2, 0)
    wall = "word " * 1300
    assert too_few_headings(f"# Title\n\n{wall}\n\n## One\n") is not None
    assert too_few_headings(f"# Title\n\n{wall}\n\n## One\n\n### Two\n") is None


@pytest.mark.parametrize("page", [p for p in PAGES if p not in NOT_YET])
def test_a_long_page_has_headings_to_scan(page: str) -> None:
    found = too_few_headings(Path(DOCS, page).read_text(encoding="utf-8"))
    assert found is None, f"docs/{page}: {found}; give it `##` sections"


def test_the_pages_not_yet_in_sections_still_need_it() -> None:
    done = [
        p for p in NOT_YET if too_few_headings(Path(DOCS, p).read_text(encoding="utf-8")) is None
    ]
    assert done == [], f"{done} have their headings: take them out of NOT_YET"
