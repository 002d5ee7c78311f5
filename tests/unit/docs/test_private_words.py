"""The manual speaks to users: no issue numbers, no file names of the notebooks evalq was built
from, no "the seed"; a public source is named by its public title."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

PRIVATE = (
    re.compile(r"\bissues? (?:\d+|[A-Z])\b"),  # an issue named by its number or letter
    re.compile(r"\b\d{3}_[0-9a-f]{16}(?:\.txt)?\b"),  # a notebook's file name
    re.compile(
        r"\bseed (?:notebook|document)s?\b|\bthe seeds?\b(?! *(?:[=:\d]|\(`-))", re.IGNORECASE
    ),
)
PAGES = sorted([*Path(ROOT, "docs").rglob("*.md"), Path(ROOT, "README.md")])


def private_words(text: str) -> list[str]:
    return [m.group(0) for pattern in PRIVATE for m in pattern.finditer(text)]


def test_the_patterns_find_what_they_are_for() -> None:
    said = "As issue 14 asked, the seed (`001_9d8fb719b23020bd.txt`) and the Gecko seed notebook"
    assert private_words(said) == [
        "issue 14",
        "001_9d8fb719b23020bd.txt",
        "the seed",
        "seed notebook",
    ]
    fine = "rows drawn with the seed 0, `seed=3`, the seed (`--seed`) and GitHub issues #4136"
    assert private_words(fine) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_uses_private_words(page: Path) -> None:
    found = private_words(page.read_text())
    assert not found, f"{page.relative_to(ROOT)}: {found}; name the public source instead"
