"""What the model under test is sent when evalq writes the responses it then judges: the user's
request as the user would write it, never fenced as untrusted material the way a judge's is."""

from __future__ import annotations

from collections.abc import Sequence

from evalq.core.judge import JudgeRequest, MediaPart

CONTEXT_HEADING = "Context:"
DOCUMENT_HEADING = "Document:"


def user_message(query: str, *, context: str | None = None, document: str | None = None) -> str:
    """The request first, then each piece of material under a plain heading."""
    parts = [query.strip()]
    if context is not None:
        parts.append(f"{CONTEXT_HEADING}\n{context}")
    if document is not None:
        parts.append(f"{DOCUMENT_HEADING}\n{document}")
    return "\n\n".join(parts)


def candidate_request(
    guidance: str | None,
    query: str,
    *,
    context: str | None = None,
    document: str | None = None,
    media: Sequence[MediaPart] = (),
) -> JudgeRequest:
    """The call to the model under test: guidance as the system instruction, the request and
    its material as the user's content (an attached document as a media part). Calling the
    request "material" or telling the model to ignore requests in it, as judge prompts do,
    would degrade the very responses being measured."""
    return JudgeRequest(
        prompt=user_message(query, context=context, document=document),
        system_instruction=guidance.strip() if guidance and guidance.strip() else None,
        media=tuple(media),
        temperature=0.0,
    )
