"""Agreement with human labels in the job summary (evalq/core/human/agreement.py): each level's
figures against values this test computes on its own (scipy, or counted by hand), and every
left-out label counted and named."""

from __future__ import annotations

from typing import Any

import pytest
from scipy import stats as scipy_stats

from evalq.client.output.html.report import render_report
from evalq.client.output.terminal.summary import summary_lines
from evalq.core.counters import JobCounters
from evalq.core.human.agreement import human_agreement
from evalq.core.human.pairwise_accuracy import pairwise_accuracy
from evalq.core.models import JobSummary, QuestionResult, RowResult
from evalq.core.summary import build_summary
from tests.support.job_configs import job_config


def labelled_row(
    i: int, mean_rating: float | None, label: Any, prompt: str, **extra: Any
) -> RowResult:
    score = None if mean_rating is None else (mean_rating - 1) / 4
    return RowResult(
        id=f"r{i}",
        line=i,
        prompt=prompt,
        status="failed" if score is None else "scored",
        score=score,
        details={"mean_rating": mean_rating},
        extra={"rating": label, **extra},
    )


RATINGS = [1, 2, 2.5, 3, 4, 5, 4, 3.5, 2, 5, 1, 4]
LABELS = [1, 2, 3, 3, 5, 5, 3, 4, 1, 4, 2, 4]


def labelled_rows() -> list[RowResult]:
    rows = [
        labelled_row(i, r, h, f"p{i // 3}", category="odd" if i % 2 else "even")
        for i, (r, h) in enumerate(zip(RATINGS, LABELS, strict=True))
    ]
    rows.append(labelled_row(20, 3, "maybe", "p9"))  # not a number
    rows.append(labelled_row(21, 3, 7, "p9"))  # off the 1-5 scale
    rows.append(labelled_row(22, 3, None, "p9"))  # missing
    rows.append(labelled_row(23, None, 4, "p9"))  # the row failed
    return rows


def quadratic_kappa(a: list[int], b: list[int], k: int = 5) -> float:
    """Cohen's weighted kappa, quadratic weights, from its textbook definition."""
    n = len(a)
    observed = [[0.0] * k for _ in range(k)]
    for x, y in zip(a, b, strict=True):
        observed[x - 1][y - 1] += 1 / n
    rows = [sum(r) for r in observed]
    cols = [sum(observed[i][j] for i in range(k)) for j in range(k)]
    w = [[(i - j) ** 2 / (k - 1) ** 2 for j in range(k)] for i in range(k)]
    num = sum(w[i][j] * observed[i][j] for i in range(k) for j in range(k))
    den = sum(w[i][j] * rows[i] * cols[j] for i in range(k) for j in range(k))
    return 1 - num / den


def test_row_level_agreement_matches_scipy_and_counts_bad_labels() -> None:
    rows = labelled_rows()
    found = human_agreement(rows, job_config("pointwise", options={"human": "rating"}))
    assert found is not None and len(found.levels) == 1
    level = found.levels[0]
    assert (level.level, level.source, level.kappa_weights) == ("row", "column rating", "quadratic")
    overall = level.overall
    assert level.labels_used == overall.labels == len(RATINGS)
    assert overall.spearman is not None and overall.kendall is not None
    assert overall.spearman.value == pytest.approx(scipy_stats.spearmanr(RATINGS, LABELS)[0])
    assert overall.kendall.value == pytest.approx(scipy_stats.kendalltau(RATINGS, LABELS)[0])
    assert overall.spearman.ci95 is not None and overall.spearman.n == len(RATINGS)
    rounded = [int(r + 0.5) for r in RATINGS]  # the mean rating, half up
    assert overall.kappa is not None and overall.accuracy is not None
    assert overall.kappa.value == pytest.approx(quadratic_kappa(rounded, LABELS))
    assert overall.accuracy.value == pytest.approx(
        sum(a == b for a, b in zip(rounded, LABELS, strict=True)) / len(LABELS)
    )
    # Pairs are rows sharing a prompt: 4 prompts of 3 rows, 3 pairs each.
    assert overall.pairwise_accuracy is not None and overall.pairwise_accuracy.n == 12
    expected = pairwise_accuracy(
        [float(r) for r in RATINGS], [float(h) for h in LABELS], [f"p{i // 3}" for i in range(12)]
    )
    assert overall.pairwise_accuracy.value == pytest.approx(expected.value)
    assert level.labels_left_out == 4
    assert level.left_out_by_reason == {
        "not_a_number": 1,
        "out_of_range": 1,
        "missing": 1,
        "row_unscored": 1,
    }
    assert "row r20: human 'maybe' is not a number or yes/no" in level.left_out_examples
    assert any(
        m.startswith("row r21: human 7 is not a whole rating") for m in level.left_out_examples
    )


def test_pairs_share_the_first_group_column_and_groups_get_their_own_figures() -> None:
    rows = labelled_rows()
    found = human_agreement(
        rows, job_config("pointwise", options={"human": "rating"}, group_by=["category"])
    )
    assert found is not None
    level = found.levels[0]
    assert level.pairs_grouped_by == "column category"
    # 6 odd and 6 even rows among the labelled ones: 15 pairs in each.
    assert level.overall.pairwise_accuracy is not None
    assert level.overall.pairwise_accuracy.n == 30
    # Each group has 6 labels, under the 10 a slice needs for figures of its own.
    assert level.by_group == []


def test_a_score_level_with_yes_no_labels_also_gets_label_accuracy() -> None:
    rows = [
        RowResult(id=f"g{i}", line=i, prompt="q", status="scored", score=float(s), extra={"ok": h})
        for i, (s, h) in enumerate(
            zip([1, 0, 1, 1, 0, 0], ["yes", "no", "no", "yes", "no", "yes"], strict=True)
        )
    ]
    found = human_agreement(rows, job_config("groundedness", options={"human": "ok"}))
    assert found is not None
    overall = found.levels[0].overall
    assert overall.accuracy is not None and overall.accuracy.value == pytest.approx(4 / 6)
    assert overall.kappa is not None
    judge, said = ["1", "0", "1", "1", "0", "0"], ["1", "0", "0", "1", "0", "1"]
    assert overall.kappa.value == pytest.approx(scipy_cohen_kappa(judge, said))


def test_pairwise_preferences_are_compared_as_labels() -> None:
    winners = ["A", "B", "tie", "A", "B", None]
    said = ["response_a", "B", "A", "a", "tie", "A"]
    rows = [
        RowResult(
            id=f"w{i}",
            line=i,
            prompt="p",
            status="scored" if w else "failed",
            score=None if w is None else 0.5,
            details={"winner": w} if w else {},
            extra={"pref": h},
        )
        for i, (w, h) in enumerate(zip(winners, said, strict=True))
    ]
    rows.append(rows[0].model_copy(update={"id": "w9", "extra": {"pref": "C"}}))
    found = human_agreement(rows, job_config("pairwise", options={"human": "pref"}))
    assert found is not None
    level = found.levels[0]
    assert level.level == "preference"
    assert level.overall.accuracy is not None
    assert level.overall.accuracy.value == pytest.approx(3 / 5)  # w0, w1, w3 of w0-w4
    assert level.overall.accuracy.n == 5
    assert level.left_out_by_reason == {"row_unscored": 1, "unknown_label": 1}
    assert level.overall.spearman is None


def question(tag: str, answer: str | None, human_label: str | None, **extra: Any) -> QuestionResult:
    return QuestionResult(
        question=f"is there a {tag}?",
        tag=tag,
        expected="yes",
        answer=answer,
        result=None if answer is None else int(answer == "yes"),
        status="ok" if answer else "unscored",
        reason=None if answer else "parse_error",
        source="dataset",
        human=human_label,
        **extra,
    )


def test_questions_are_compared_per_tag_and_bad_answers_counted() -> None:
    answers = ["yes", "no"] * 6
    humans = ["yes", "no", "no", "no", "yes", "yes"] * 2
    qs = [question("color", a, h) for a, h in zip(answers, humans, strict=True)]
    qs += [
        question("shape", "yes", None, human_error="questions[3]: human 'maybe' is not yes or no")
    ]
    qs += [question("shape", None, "yes"), question("shape", "yes", None)]
    row = RowResult(id="img1", line=1, prompt="p", status="partial", score=0.5, questions=qs)
    found = human_agreement([row], job_config("gecko-image"))
    assert found is not None
    level = found.levels[0]
    assert (level.level, level.source) == ("question", "questions[].human")
    expected_accuracy = sum(a == h for a, h in zip(answers, humans, strict=True)) / 12
    assert level.overall.accuracy is not None
    assert level.overall.accuracy.value == pytest.approx(expected_accuracy)
    assert level.overall.kappa is not None
    assert level.overall.kappa.value == pytest.approx(scipy_cohen_kappa(answers, humans), abs=1e-12)
    assert [f.scope for f in level.by_tag] == ["tag color"]  # shape has too few labels
    assert level.left_out_by_reason == {"unknown_label": 1, "unscored": 1, "missing": 1}
    assert "row img1 questions[3]: human 'maybe' is not yes or no" in level.left_out_examples


def scipy_cohen_kappa(a: list[str], b: list[str]) -> float:
    """Unweighted kappa from scipy's contingency table."""
    labels = sorted(set(a) | set(b))
    table = scipy_stats.contingency.crosstab(a, b, levels=(labels, labels)).count
    n = table.sum()
    observed = table.trace() / n
    expected = (table.sum(axis=0) * table.sum(axis=1)).sum() / n**2
    return float((observed - expected) / (1 - expected))


def grounded_row(row_id: str, labels: list[str | None], human_labels: Any) -> RowResult:
    sentences = [
        {"index": i, "sentence": f"Sentence {i}.", "label": lab, "status": "labelled"}
        for i, lab in enumerate(labels)
    ]
    sentences.append({"index": len(labels), "sentence": "—", "label": None, "status": "no_words"})
    return RowResult(
        id=row_id,
        line=1,
        prompt="q",
        status="scored",
        score=1.0,
        details={"judges": {"m": {"status": "ok", "response_sentences": sentences}}},
        extra={"human_labels": human_labels},
    )


def test_sentence_labels_follow_evalqs_split_and_a_mismatch_is_named() -> None:
    rows = [
        grounded_row(
            "s1", ["supported", "unsupported", "no_rad"], ["supported", "supported", "no_rad"]
        ),
        grounded_row(
            "s2",
            ["supported", "contradictory"],
            '[{"sentence": "sentence 1", "label": "contradictory"},'
            ' {"sentence": "Not there.", "label": "supported"},'
            ' {"sentence": "Sentence 0.", "label": "bogus"}]',
        ),
        grounded_row("s3", ["supported", "supported"], ["supported"]),  # 1 label, 2 sentences
    ]
    found = human_agreement(rows, job_config("groundedness"))
    assert found is not None
    level = found.levels[0]
    assert level.level == "sentence"
    assert level.labels_used == 4  # s1's three and s2's first
    assert level.overall.accuracy is not None
    assert level.overall.accuracy.value == pytest.approx(3 / 4)
    assert level.left_out_by_reason == {"not_in_split": 2, "unknown_label": 1}
    assert any(
        "row s3: human_labels has 1 labels but evalq split the response into 2 sentences" in m
        for m in level.left_out_examples
    )
    assert any(
        "row s2 sentence 2: 'Not there.' is not a sentence" in m for m in level.left_out_examples
    )


def test_no_labels_no_agreement_and_a_multi_candidate_job_says_why() -> None:
    plain = RowResult(id="a", line=1, prompt="p", status="scored", score=1.0)
    assert human_agreement([plain], job_config("pointwise")) is None
    cell = plain.model_copy(update={"candidate": "model_a", "extra": {"rating": 3}})
    found = human_agreement([cell], job_config("pointwise", options={"human": "rating"}))
    assert found is not None and found.levels == [] and "multi-candidate" in (found.note or "")


def test_the_summary_status_and_report_show_the_agreement() -> None:
    rows = labelled_rows()
    cfg = job_config("pointwise", options={"human": "rating"}).model_copy(
        update={"rows_total": len(rows)}
    )
    summary = build_summary(cfg, JobCounters(status="finished"), {}, rows, now=1.0)
    assert summary.human_agreement is not None
    again = JobSummary.model_validate_json(summary.model_dump_json())  # --json round trip
    assert again.human_agreement == summary.human_agreement
    text = "\n".join(summary_lines(summary, width=250))
    assert "human agreement (row, column rating)" in text
    assert "Spearman" in text and "12 labels, 4 left out" in text
    html = render_report(summary, rows)
    assert "Agreement with human labels" in html
    assert "row r20: human &#39;maybe&#39; is not a number or yes/no" in html
