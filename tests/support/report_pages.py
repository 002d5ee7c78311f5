"""What a test reads off an HTML report: each row card's anchor, and the borderline list's
links, so a test checks that every listed verdict leads to its own row."""

from __future__ import annotations

import html as html_text
import re


def report_card_anchors(page: str) -> dict[str, str]:
    """Each row card's anchor (its HTML id) by the row it shows (the name, unescaped)."""
    cards = re.findall(r'<div class="card row [^"]*" id="([^"]+)" data-row="([^"]*)"', page)
    return {html_text.unescape(name): anchor for anchor, name in cards}


def borderline_section(page: str) -> str:
    """The borderline list's table; empty when the page has none."""
    if 'id="borderline"' not in page:
        return ""
    return page.split('id="borderline"', 1)[1].split("</table>", 1)[0]


def borderline_list_links(page: str) -> list[tuple[str, str]]:
    """The borderline list's (anchor, row) links in the order listed, the row unescaped."""
    found = re.findall(r'<a href="#([^"]+)">([^<]*)</a>', borderline_section(page))
    return [(anchor, html_text.unescape(row)) for anchor, row in found]
