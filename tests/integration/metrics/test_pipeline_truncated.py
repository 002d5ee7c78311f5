"""A judge reply cut off at MAX_TOKENS, end to end: real Redis, real workers, the real
google-genai client talking to the fake server over HTTP.

The fake server sends a scripted MAX_TOKENS reply as the first half of the rule's text with
finishReason MAX_TOKENS. The half sent here is a groundedness labelling cut inside its second
sentence label: its first, complete sentence object reads as "all supported", so a cut-off reply
read as far as it parses would come back grounded 1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeGemini
from tests.support.datasets import write_rows

pytestmark = pytest.mark.integration

CONTEXT = "Apples are red fruits. Bananas are yellow fruits."
QUERY = "What colour are apples?"
JUDGE = "tr-scripted-judge"

WHOLE = json.dumps(
    {
        "eligibility_rationale": "it answers",
        "eligible": True,
        "sentences": [
            {
                "sentence": "Apples are red.",
                "label": "supported",
                "rationale": "scripted",
                "excerpt": "Apples are red fruits.",
            }
        ],
    }
)
CUT = (
    '{"eligibility_rationale": "it answers", "eligible": true, "sentences": ['
    '{"sentence": "Apples are red.", "label": "supported", "rationale": "scripted", '
    '"excerpt": "Apples are red fruits."}, {"sentence": "Bananas cure cancer.", "label": "sup'
)


def cut_reply(cut: str) -> str:
    """A rule reply whose first half, the part the fake sends at MAX_TOKENS, is ``cut``."""
    return cut + "#" * len(cut)


def test_cut_off_replies_are_unscored_truncated_and_never_replayed(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    fake.script(
        [
            {"match": "TrWhole", "reply": WHOLE},
            {"match": "TrCut", "reply": cut_reply(CUT), "finish_reason": "MAX_TOKENS"},
        ]
    )
    rows = [
        {"id": "whole", "query": QUERY, "context": CONTEXT, "response": "TrWhole: Apples are red."},
        {
            "id": "cut-1",
            "query": QUERY,
            "context": CONTEXT,
            "response": "TrCut one: Apples are red. Bananas cure cancer.",
        },
        {
            "id": "cut-2",
            "query": QUERY,
            "context": CONTEXT,
            "response": "TrCut two: Apples are red. Bananas cure cancer.",
        },
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    job = client.submit("groundedness", data, judge_model=JUDGE).job_id
    summary = client.wait(job, timeout_s=60)
    results = {r.id: r for r in client.results(job)}

    assert {k: (r.status, r.score) for k, r in results.items()} == {
        "whole": ("scored", 1.0),
        "cut-1": ("failed", None),  # never grounded 1 from the part that parses
        "cut-2": ("failed", None),
    }
    assert summary.unscored_by_reason == {"truncated": 2}
    assert summary.rows_failed_by_reason == {"truncated": 2}
    assert summary.mean_score == pytest.approx(1.0)  # from the whole reply alone
    judged = results["cut-1"].details["judges"][JUDGE]
    assert (judged["status"], judged["reason"], judged["grounded"]) == (
        "unscored",
        "truncated",
        None,
    )
    assert "finish_reason MAX_TOKENS" in judged["detail"]
    assert "prompt tokens" in judged["detail"] and "output tokens" in judged["detail"]
    assert summary.judge_calls == 3
    assert summary.output_tokens >= 2 * (len(CUT) // 4)  # a cut-off reply's tokens count

    # A rerun replays the whole reply from the call cache, but asks again for the cut ones.
    again = client.wait(client.submit("groundedness", data, judge_model=JUDGE).job_id, timeout_s=60)
    assert (again.cache_hits, again.judge_calls) == (1, 2)
    assert again.unscored_by_reason == {"truncated": 2}
    assert fake.stats()["script_rules_fired"] == {"0": 1, "1": 4}
