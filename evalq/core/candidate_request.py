"""What the model under test is sent when evalq writes the responses it then judges.

Judge prompts fence the material under evaluation as untrusted and tell the judge to ignore any
request inside it, so that content can't steer a verdict. A model under test needs the
opposite: the user's request is the thing it must answer, and calling it "material" or telling
the model to ignore requests in it degrades the very responses being measured. So its guidance
travels as the system instruction (as the seed sends rank guidance), and the request with its
material (a context, a text document) is the user's message, as a user would write it.
"""

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
    its material as the user's content (an attached document as a media part)."""
    return JudgeRequest(
        prompt=user_message(query, context=context, document=document),
        system_instruction=guidance.strip() if guidance and guidance.strip() else None,
        media=tuple(media),
        temperature=0.0,
    )
