"""Results as tables (Job.results(), `evalq results --format csv`): each metric's own columns
and every extra column under the user's name."""

from __future__ import annotations

import csv
import io
from typing import Any

from evalq.client.output.exports.csv_tables import results_csv
from evalq.client.output.exports.frames import results_frame
from evalq.core.models import Repeats, RowResult, Sample


def detailed_row(details: dict[str, Any], extra: dict[str, Any] | None = None) -> RowResult:
    return RowResult(
        id="r1", line=1, prompt="p", status="scored", score=0.75, details=details, extra=extra or {}
    )


def csv_rows(rows: list[RowResult]) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(results_csv(rows))))


POINTWISE = {
    "mean_rating": 4.0,
    "ratings": [4],
    "judges": {"j1": {"mean_rating": 4.0, "samples": [{"rating": 4, "explanation": "Clear."}]}},
}


def test_pointwise_rows_have_rating_and_explanation_columns() -> None:
    rows = [detailed_row(POINTWISE, {"category": "billing", "prompt": "clash"})]
    (line,) = csv_rows(rows)
    assert (line["rating"], line["explanation"]) == ("4", "Clear.")
    assert line["category"] == "billing"  # an extra column under its own name
    assert line["extra:prompt"] == "clash"  # prefixed only where it clashes
    frame = results_frame(rows)
    assert frame.loc[0, "rating"] == 4.0 and frame.loc[0, "explanation"] == "Clear."
    assert frame.loc[0, "category"] == "billing" and frame.loc[0, "extra:prompt"] == "clash"


def test_several_judges_get_a_column_each() -> None:
    judges = {
        "j1": {"mean_rating": 4.0, "samples": [{"explanation": "Good."}]},
        "j2": {"mean_rating": 2.0, "samples": [{"explanation": "Vague."}]},
    }
    (line,) = csv_rows([detailed_row({"mean_rating": 3.0, "judges": judges})])
    assert line["rating:j2"] == "2" and line["explanation:j2"] == "Vague."
    assert line["explanation"] == "Good."


def test_pairwise_rows_have_winner_and_explanation() -> None:
    details = {
        "sides": {"A": "response_a", "B": "response_b"},
        "winner": "B",
        "comparisons": [{"explanations": {"original": "B cites the source.", "swapped": "B."}}],
    }
    (line,) = csv_rows([detailed_row(details)])
    assert (line["winner"], line["winner_is"]) == ("B", "response_b")
    assert line["explanation"] == "B cites the source."


def test_groundedness_rows_have_grounded_eligible_and_labels() -> None:
    judge = {
        "eligible": True,
        "why": "every claim is supported",
        "response_sentences": [
            {"index": 0, "sentence": "Boxes ship daily.", "label": "supported"},
            {"index": 1, "sentence": "Hope this helps!", "label": "no_rad"},
        ],
    }
    details = {"response": "Boxes ship daily. Hope this helps!", "response_source": "dataset"}
    details |= {"judges": {"j": judge}, "mean": {"grounded": 1}}
    (line,) = csv_rows([detailed_row(details)])
    assert (line["grounded"], line["eligible"]) == ("1", "True")
    assert line["labels"] == "[1] supported: Boxes ship daily. | [2] no_rad: Hope this helps!"
    assert line["response"] == "Boxes ship daily. Hope this helps!"


def test_rank_rows_have_their_order_and_winner() -> None:
    details = {"points": {"a": 1.0, "b": 3.0, "c": 2.0}, "comparisons": [{}]}
    (line,) = csv_rows([detailed_row(details)])
    assert line["winner"] == "b" and line["order"] == "b (3) > c (2) > a (1)"


def test_an_unscored_rating_is_empty_never_zero() -> None:
    details = {"mean_rating": None, "judges": {"j": {"mean_rating": None, "samples": []}}}
    (line,) = csv_rows([detailed_row(details)])
    assert line["rating"] == "" and line["explanation"] == ""


def test_repeated_verdicts_show_their_samples_and_certainty() -> None:

    row = detailed_row(POINTWISE).model_copy(
        update={
            "repeats": [
                Repeats(
                    unit="rating",
                    judge_model="j1",
                    samples=[Sample(answer="4"), Sample(answer="4"), Sample(answer="4")],
                    verdict="4",
                    certainty=0.96,
                    rule="beta-binomial-predictive",
                ),
                Repeats(
                    unit="rating",
                    judge_model="j2",
                    samples=[Sample(answer=a) for a in "45454545"],
                    verdict=None,
                    decided=False,
                    certainty=0.5,
                ),
            ]
        }
    )
    (line,) = csv_rows([row])
    assert (line["samples"], line["undecided"], line["certainty"]) == ("11", "1", "0.5")
    assert line["repeats"].startswith("rating by j1: 4 4 4 -> 4 (0.96) | rating by j2: 4 5")
    assert "-> undecided (0.50)" in line["repeats"]
    frame = results_frame([row])
    assert frame.loc[0, "undecided"] == 1 and frame.loc[0, "samples"] == 11
    assert csv_rows([detailed_row(POINTWISE)])[0].get("samples") is None  # asked once: no column


def test_a_verdict_no_sample_answered_is_unscored_not_undecided() -> None:
    """The CSV counts undecided verdicts as the HTML report and the noise floor do: split with
    an answer; one whose samples all went unscored is unscored."""
    silent = Repeats(
        unit="rating", samples=[Sample(answer=None), Sample(answer=None)], decided=False
    )
    row = detailed_row(POINTWISE).model_copy(update={"repeats": [silent]})
    (line,) = csv_rows([row])
    assert line["undecided"] == "0"
    assert "-> unscored" in line["repeats"]
