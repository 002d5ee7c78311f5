"""Reading the built site's pages as the checks need them: the article of a page (never the
navigation or the table of contents, which repeat headings and could make a missing section
look present), cut into sections at its headings, each with its text and its code spans."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}


@dataclass
class Section:
    heading: str
    text: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)

    def words(self) -> str:
        return "".join(self.text)


class _ArticleReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections = [Section("")]
        self.depth = 0  # nesting inside <article>
        self.in_heading = False
        self.heading: list[str] = []
        self.code: list[str] | None = None
        self.skip = 0  # inside a heading's permalink (¶)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "article":
            self.depth += 1
        if not self.depth:
            return
        if tag in HEADINGS:
            self.in_heading, self.heading = True, []
        elif tag == "a" and ("class", "headerlink") in attrs:
            self.skip += 1
        elif tag == "code" and not self.in_heading:
            self.code = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self.depth -= 1
        if not self.depth:
            return
        if tag in HEADINGS and self.in_heading:
            self.in_heading = False
            self.sections.append(Section(" ".join("".join(self.heading).split())))
        elif tag == "a" and self.skip:
            self.skip -= 1
        elif tag == "code" and self.code is not None:
            self.sections[-1].codes.append("".join(self.code))
            self.code = None

    def handle_data(self, data: str) -> None:
        if not self.depth or self.skip:
            return
        if self.in_heading:
            self.heading.append(data)
            return
        self.sections[-1].text.append(data)
        if self.code is not None:
            self.code.append(data)


def page_sections(html: str) -> list[Section]:
    """The article's sections in order; the first holds what comes before any heading."""
    reader = _ArticleReader()
    reader.feed(html)
    return reader.sections


def built_page(site: Path, page: str) -> str:
    """The HTML MkDocs wrote for a page (e.g. "reference/cli"), with directory URLs."""
    return (site / page / "index.html").read_text(encoding="utf-8")


def page_codes(sections: list[Section]) -> set[str]:
    return {code.strip() for section in sections for code in section.codes}


def page_headings(sections: list[Section]) -> set[str]:
    return {section.heading for section in sections}


def flag_shown(flag: str, text: str) -> bool:
    """The flag as a whole word of the text: --map is not found in --map-file."""
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text) is not None


def names_not_in(wanted: set[str] | list[str], present: set[str]) -> list[str]:
    return sorted(set(wanted) - present)
