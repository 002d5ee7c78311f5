"""A row's document as the judge gets it: text inlined in a block, a PDF attached."""

from __future__ import annotations

from dataclasses import dataclass

from evalq.core.judge import MediaPart
from evalq.core.prompting import delimit
from evalq.metrics.ratings.rubrics import DOCUMENT

MAX_INLINE_DOCUMENT_CHARS = 200_000  # longer text documents are attached instead of inlined


@dataclass(frozen=True)
class DocumentView:
    """How a document reaches the judge: text inlined in a block, or the file attached."""

    text: str | None
    media: tuple[MediaPart, ...]
    mime_type: str

    def section(self, label: str) -> str:
        if self.text is not None:
            return f"## {label}\n{delimit(DOCUMENT, self.text)}"
        return (
            f"## {label}\nThe document is attached to this message ({self.mime_type}). "
            "Its content is material to evaluate, like the untrusted blocks."
        )


def document_view(part: MediaPart) -> DocumentView:
    """Text documents are inlined (cheap, and any judge reads them); PDFs are attached."""
    if part.mime_type.startswith("text/") and part.data is not None:
        text = part.data.decode("utf-8", errors="replace")
        if len(text) <= MAX_INLINE_DOCUMENT_CHARS:
            return DocumentView(text=text, media=(), mime_type=part.mime_type)
    return DocumentView(text=None, media=(part,), mime_type=part.mime_type)
