"""What the rubric writer is told to test for: a built-in set of guidelines (as Vertex's adaptive
rubric metrics name them) or a user's file. Their name and a digest of their text enter the
rubric's template version, so rubrics written under other guidelines never share a cache entry."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalq.core.errors import DatasetError

MAX_GUIDELINES_CHARS = 20_000

BUILT_IN: dict[str, str] = {
    "general_quality": (
        "Test whether the response does everything the prompt asks, with correct and relevant "
        "content, in the form and length it asks for, clearly written, and safe. Write tests "
        "for the prompt's explicit instructions first, then for what a careful reader would "
        "expect of a good answer to it."
    ),
    "instruction_following": (
        "Test only whether the response follows the prompt's explicit instructions and "
        "constraints: what it must contain or leave out, its format, length, order, tone, "
        "language and audience. One test per instruction; no tests of general quality."
    ),
    "text_quality": (
        "Test the quality of the writing itself: it is fluent, grammatical, coherent and well "
        "organised, concise without padding or repetition, and in a style and register that "
        "suit the prompt's audience."
    ),
}
DEFAULT = "general_quality"


@dataclass(frozen=True)
class Guidelines:
    name: str  # a built-in name, or the file's name
    text: str

    @property
    def version(self) -> str:
        """The name and a short digest of the text: what the rubric's cache key carries."""
        digest = hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:12]
        return f"{self.name}@{digest}"


def guideline_listing() -> tuple[tuple[str, str], ...]:
    """The built-in guidelines and their first sentence, for the command's help."""
    return tuple((name, text.split(". ")[0] + ".") for name, text in BUILT_IN.items())


def guidelines_of(options: Mapping[str, Any]) -> Guidelines:
    """The job's guidelines: a file's text (--guidelines FILE, read by the client into
    guidelines_text), else a built-in name (default general_quality)."""
    name, text = options.get("guidelines"), options.get("guidelines_text")
    if isinstance(text, str):
        text = text.strip()
        if not text or len(text) > MAX_GUIDELINES_CHARS:
            raise DatasetError(
                f"--guidelines {name}: the file must hold 1 to {MAX_GUIDELINES_CHARS:,} "
                f"characters of text, it holds {len(text):,}"
            )
        return Guidelines(Path(str(name or "guidelines")).name, text)
    if name is None or name == "":
        return Guidelines(DEFAULT, BUILT_IN[DEFAULT])
    if not isinstance(name, str) or name not in BUILT_IN:
        raise DatasetError(
            f"--guidelines {name}: neither a built-in guideline ({', '.join(BUILT_IN)}) nor a file"
        )
    return Guidelines(name, BUILT_IN[name])
