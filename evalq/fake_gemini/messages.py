"""How the simulated model under test reads a plain user message (a request, then material under
headings such as "Context:"): it is sent what a user would send, not the delimited blocks of a
judge prompt."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SOURCE_LABELS = frozenset(
    {"context", "context document", "source", "sources", "document", "passage", "material"}
)
QUERY_LABELS = frozenset({"query", "user query", "request", "question", "prompt"})
# A line that holds only a label and a colon, maybe in markdown bold or as a heading.
_HEADING_RE = re.compile(
    r"^[ \t]*(?:#+[ \t]*)?[*_]*[ \t]*(?P<label>[A-Za-z][A-Za-z ]{0,30}?)[ \t]*[*_]*:[ \t]*[*_]*"
    r"[ \t]*$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class PlainMessage:
    query: str
    sources: list[str] = field(default_factory=list)  # each piece of material, in order

    @property
    def source(self) -> str:
        return "\n".join(self.sources)


def read_message(text: str) -> PlainMessage:
    """The request (the text before the first material heading, or under its own heading) and
    the material under each known heading."""
    headings = [
        (m, m.group("label").strip().lower())
        for m in _HEADING_RE.finditer(text)
        if m.group("label").strip().lower() in SOURCE_LABELS | QUERY_LABELS
    ]
    query: str | None = None
    sources: list[str] = []
    for i, (m, label) in enumerate(headings):
        end = headings[i + 1][0].start() if i + 1 < len(headings) else len(text)
        body = text[m.end() : end].removeprefix("\n").rstrip("\n")
        if label in SOURCE_LABELS:
            sources.append(body)
        elif query is None:
            query = body.strip()
    if query is None:
        first = next((m.start() for m, label in headings if label in SOURCE_LABELS), len(text))
        query = text[:first].strip()
    return PlainMessage(query=query, sources=sources)
