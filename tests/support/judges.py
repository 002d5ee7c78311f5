"""An in-memory judge for unit tests of pure metric logic (no server, no Redis).

Like the runtime's judge stack, it applies evalq.core.judge.ensure_complete: a reply given a
finish_reason other than STOP raises TruncatedReply, as it would on a worker."""

from __future__ import annotations

from collections.abc import Callable

from evalq.core.errors import JudgeError
from evalq.core.judge import JudgeReply, JudgeRequest, ensure_complete

Reply = str | JudgeError


class ListJudge:
    """Hands out canned replies (a list in order, or a function of the request), raises the
    errors it is given, and keeps every request it saw. A subclass names its judges otherwise
    by `default_model`."""

    default_model = "test-judge"

    def __init__(
        self,
        replies: list[Reply] | Callable[[JudgeRequest], Reply],
        model: str | None = None,
        finish_reason: str = "STOP",
    ) -> None:
        self.model = self.default_model if model is None else model
        self.replies = replies
        self.finish_reason = finish_reason
        self.requests: list[JudgeRequest] = []

    def generate(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        reply = self.replies(request) if callable(self.replies) else self.replies.pop(0)
        if isinstance(reply, JudgeError):
            raise reply
        return ensure_complete(
            JudgeReply(
                text=reply,
                model=self.model,
                model_version="v",
                prompt_tokens=len(request.prompt) // 4 + 1,
                output_tokens=len(reply) // 4 + 1,
                finish_reason=self.finish_reason,
            )
        )


def assert_match_beats_near_miss(score: Callable[[str], float], match: str, near_miss: str) -> None:
    """An example's matching prompt scores full marks and its near miss less: `score` (a
    judge's score of the example's image or clip against a prompt) tells the two apart."""
    matched, missed = score(match), score(near_miss)
    assert matched == 1.0
    assert missed < matched
