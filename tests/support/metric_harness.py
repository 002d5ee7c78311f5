"""The in-process metric harness is evalq's own (evalq.testing); the ratings metrics' unit
tests (pointwise, pairwise, rank) and the truncation tests add rows of questions to it."""

from __future__ import annotations

from evalq.core.models import RowInput
from evalq.testing import FailingJudge, Harness, MemoryJudge, Reply, simulated

__all__ = ["FailingJudge", "Harness", "MemoryJudge", "Reply", "qa_inputs", "simulated"]


def qa_inputs(n: int = 1) -> list[RowInput]:
    return [
        RowInput(
            id=f"r{i}",
            line=i + 1,
            prompt=f"Question {i}?",
            data={"prompt": f"Question {i}?", "response": f"Answer {i}."},
        )
        for i in range(n)
    ]
