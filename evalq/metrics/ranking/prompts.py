"""What the model under test is asked when ranking generates a candidate's response from a
guidance text (options candidate_prompts). The judges' comparison prompt is the pairwise one,
evalq.metrics.ratings.prompts."""

from __future__ import annotations

from collections.abc import Mapping

from evalq.core.candidate_request import candidate_request
from evalq.core.judge import JudgeRequest
from evalq.metrics.ratings.documents import DocumentView

GENERATION_TEMPLATE_VERSION = "rank-generation/2"


def generation_request(
    guidance: str, values: Mapping[str, str], document: DocumentView | None
) -> JudgeRequest:
    """What the model under test gets for a guidance variant, as the seed sends it: the
    guidance as the system instruction, the row's question (with its context, and a text
    document) as the user's message, a PDF document attached."""
    return candidate_request(
        guidance,
        values.get("prompt", ""),
        context=values.get("context"),
        document=document.text if document is not None else None,
        media=document.media if document is not None else (),
    )
