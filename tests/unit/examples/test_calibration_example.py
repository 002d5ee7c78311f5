"""The calibration example agrees with the simulated judge in the way its docstring says:
under `summarization_quality` the judge's ratings follow the rater's order (Spearman above
0.8), under `fluency` they do not (below 0.3). Computed with the real prompt builder and the
fake server's own rating code, so a change to either that breaks the design shows here."""

from __future__ import annotations

import json
from pathlib import Path

from scipy import stats as sp

from evalq.examples.calibration import HUMAN_COLUMN, calibration_rows, write_calibration_example
from evalq.fake_gemini.prompt_grammar import blocks_by_kind
from evalq.fake_gemini.protocol import FakeRequest
from evalq.fake_gemini.skills.ratings import answer
from evalq.metrics.ratings.prompts import pointwise_prompt
from evalq.metrics.ratings.templates import resolve_template


def simulated_rating(template: str, row: dict[str, object]) -> int:
    text = pointwise_prompt(
        resolve_template({"template": template}, "pointwise"),
        {k: str(v) for k, v in row.items()},
    )
    assert blocks_by_kind(text)
    reply = answer(FakeRequest(model="m", text=text), judge=None)  # type: ignore[arg-type]
    assert reply is not None
    return int(json.loads(reply)["rating"])


def agreement(template: str) -> float:
    rows = [r for r in calibration_rows() if HUMAN_COLUMN in r]
    ratings = [simulated_rating(template, r) for r in rows]
    return float(sp.spearmanr(ratings, [r[HUMAN_COLUMN] for r in rows]).statistic)


def test_the_labels_follow_the_summary_template_and_not_fluency() -> None:
    assert agreement("summarization_quality") > 0.8
    assert agreement("fluency") < 0.3


def test_one_row_is_left_unrated_and_prompts_are_shared(tmp_path: Path) -> None:
    path = write_calibration_example(tmp_path)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows if HUMAN_COLUMN not in r] == ["lighthouses-unrated"]
    assert len({r["id"] for r in rows}) == len(rows) == 17
    assert len({r["prompt"] for r in rows}) == 4  # rows paired within a prompt
