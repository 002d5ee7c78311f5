"""Reading evalq's prompts back in tests: the delimited blocks (evalq.core.prompting.delimit)
by kind. The fake server reads prompts with a grammar of its own (evalq.fake_gemini.prompt_grammar),
so a drift in evalq's format fails a test instead of being read the same wrong way twice."""

from __future__ import annotations

import re

_SECTION_RE = re.compile(
    r"<untrusted-(?P<nonce>[0-9a-f]{16}) kind=(?P<kind>[A-Za-z0-9_]+)>\n"
    r"(?P<body>.*?)\n</untrusted-(?P=nonce)>",
    re.DOTALL,
)


def sections(text: str) -> list[tuple[str, str]]:
    """Every delimited block as (kind, body), in order."""
    return [(m.group("kind"), m.group("body")) for m in _SECTION_RE.finditer(text)]


def extract_section(text: str, kind: str) -> str | None:
    """The first block of a kind, or None."""
    for found, body in sections(text):
        if found == kind:
            return body
    return None
