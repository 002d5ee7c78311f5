"""The drift report of two jobs on the same rows: units matched by what was asked whatever the
judge is called, unscored units left out and counted, which way verdicts changed, the verdict
rule against a retest or the jobs' repeats, the candidates' order, and the people's labels."""

from __future__ import annotations

import pytest

from evalq.comparisons.drift.build import decide, drift_report, human_verdict
from evalq.comparisons.drift.report import Noise, UnitDrift
from evalq.comparisons.drift.units import JobSide
from evalq.core.models import (
    AgreementFigures,
    AgreementStat,
    HumanAgreement,
    HumanLevelAgreement,
    QuestionResult,
    Repeats,
    RowResult,
    Sample,
)


def rated(i: int, judge: str, rating: int | None, candidate: str | None = None) -> RowResult:
    unit = QuestionResult(
        question=f"rating by {judge}",
        tag="rating",
        expected="",
        answer=None if rating is None else str(rating),
        result=None,
        status="ok" if rating is not None else "unscored",
        reason=None if rating is not None else "parse_error",
    )
    return RowResult(
        id=f"r{i}",
        line=i + 1,
        prompt="p",
        status="scored" if rating is not None else "failed",
        score=None if rating is None else (rating - 1) / 4,
        questions=[unit],
        details={} if rating is None else {"mean_rating": float(rating)},
        candidate=candidate,
        extra={"cat": "even" if i % 2 == 0 else "odd"},
    )


def side(job: str, judge: str, ratings: list[int | None], **more: object) -> JobSide:
    rows = [rated(i, judge, r) for i, r in enumerate(ratings)]
    return JobSide(job_id=job, metric="pointwise", judges=[judge], rows=rows, **more)  # type: ignore[arg-type]


def test_units_match_across_judges_and_changes_are_counted_which_way() -> None:
    old = side("old", "judge-a", [4, 4, 5, 3, None, 2])
    new = side("new", "judge-b", [4, 5, 5, 2, 3, 2])
    report = drift_report(old, new, group_by=["cat"])
    u = report.units
    assert (u.units, u.changed) == (5, 2)
    assert u.scale == "ordinal" and u.alpha_level == "interval"
    assert {(c.before, c.after, c.units) for c in u.changes} == {("4", "5", 1), ("3", "2", 1)}
    assert u.left_out == {"unscored by the old judge": 1}
    assert u.kappa is not None and u.kappa.method == "cohen kappa (quadratic weights)"
    # Mean rating 3.6 -> 3.6 over the five rows both scored: +1 and -1 cancel.
    assert report.score.rows == 5 and report.score.change == 0.0
    assert [g.scope for g in report.groups] == ["group cat=even", "group cat=odd"]
    assert [r.id for r in report.changed_rows] == ["r1", "r3"]
    assert report.changed_rows[0].changes[0].unit == "rating by judge-a"
    assert report.verdict.drift is None  # no repeats, no retest: the noise is unknown
    assert "noise floor unknown" in report.verdict.line


def test_a_retest_decides_drift_beyond_noise_or_within() -> None:
    ratings: list[int | None] = [3] * 100
    changed: list[int | None] = [4] * 20 + [3] * 80
    old = side("old", "judge-a", ratings)
    retest = side("again", "judge-a", ratings)
    report = drift_report(old, side("new", "judge-b", changed), retest=retest)
    assert report.noise.source == "retest" and report.noise.share == 0.0
    assert report.noise.mean_change == 0.0  # the old judge's mean again, on the same rows
    assert report.score.change == 0.2  # 20 of 100 ratings a point higher
    assert report.verdict.drift is True
    assert report.verdict.line.startswith("drift beyond noise: 20 of 100 verdicts changed")
    same = drift_report(old, side("same", "judge-a", ratings), retest=retest)
    assert same.verdict.drift is False
    assert same.verdict.line.startswith("within the judge's own noise")


def test_the_rule_is_the_interval_of_the_difference_of_the_two_shares() -> None:
    noise = Noise(source="repeats", job_id="j", units=50, share=0.1, ci95=(0.05, 0.15))
    # 0.2 - 0.1: Newcombe's lower end 0.1 - sqrt(0.06^2 + 0.05^2) = 0.022 > 0, though the two
    # intervals overlap; 0.15 - 0.1: 0.05 - 0.078 < 0.
    beyond = UnitDrift(units=100, changed=20, share=0.2, ci95=(0.14, 0.3))
    within = UnitDrift(units=100, changed=15, share=0.15, ci95=(0.09, 0.24))
    verdict = decide(beyond, noise)
    assert verdict.drift is True
    assert verdict.difference_ci95 == pytest.approx(
        (0.1 - (0.06**2 + 0.05**2) ** 0.5, 0.1 + (0.1**2 + 0.05**2) ** 0.5)
    )
    assert decide(within, noise).drift is False


def test_the_noise_comes_from_repeats_when_no_retest_is_given() -> None:
    old = side("old", "judge-a", [3, 3])
    rows = [
        r.model_copy(
            update={"repeats": [Repeats(unit="rating", samples=[Sample(answer=a) for a in s])]}
        )
        for r, s in zip(old.rows, (["3", "4"], ["3", "3"]), strict=True)
    ]
    old = JobSide(job_id="old", metric="pointwise", judges=["judge-a"], rows=rows)
    report = drift_report(old, side("new", "judge-b", [3, 3]))
    # One unit of two disagrees with itself (3 then 4): the judge's own flip share is 1/2.
    assert (report.noise.source, report.noise.units, report.noise.share) == ("repeats", 2, 0.5)
    assert report.noise.note is not None and "two single samples" in report.noise.note


def test_candidates_swap_and_tau_says_how_far_the_order_moved() -> None:
    def cells(job: str, judge: str, a: int, b: int) -> JobSide:
        rows = [rated(i, judge, a, "a") for i in range(3)] + [
            rated(i, judge, b, "b") for i in range(3)
        ]
        return JobSide(job_id=job, metric="pointwise", judges=[judge], rows=rows)

    report = drift_report(cells("old", "j1", 5, 3), cells("new", "j2", 3, 4))
    ranking = report.ranking
    assert ranking is not None
    assert (ranking.old_order, ranking.new_order) == (["a", "b"], ["b", "a"])
    assert ranking.tau == -1.0
    assert [(s.ahead_before, s.ahead_after) for s in ranking.swaps] == [("a", "b")]


def _agreement(kappa: float) -> HumanAgreement:
    stat = AgreementStat(value=kappa, ci95=(kappa - 0.05, kappa + 0.05), n=40)
    level = HumanLevelAgreement(
        level="question",
        source="questions[].human",
        judge_value="answer",
        labels_used=40,
        labels_left_out=0,
        overall=AgreementFigures(labels=40, kappa=stat),
    )
    return HumanAgreement(levels=[level])


def test_the_judge_closer_to_the_people_is_named() -> None:
    verdict = human_verdict(_agreement(0.4), _agreement(0.7))
    assert verdict is not None
    assert verdict.line.startswith("the new judge agrees better with the people: question kappa")
    older = human_verdict(_agreement(0.7), _agreement(0.68))
    assert older is not None and older.line.startswith("the old judge agrees better")
    assert older.line.endswith("their intervals overlap")
    assert human_verdict(None, _agreement(0.7)) is None


def validated_row(judge: str, answers: list[str]) -> RowResult:
    questions = [
        QuestionResult(
            question=f"Is there a {thing}?",
            tag=tag,
            expected="yes",
            answer=answer,
            result=int(answer == "yes"),
            status="ok",
            judge_model=judge,
        )
        for (thing, tag), answer in zip(
            (("circle", "object"), ("red", "color")), answers, strict=True
        )
    ]
    share = sum(a == "yes" for a in answers) / len(answers)
    tags = {q.tag: float(q.result or 0) for q in questions}
    return RowResult(
        id="g1",
        line=1,
        prompt="a red circle",
        status="scored",
        score=share,
        questions=questions,
        tag_scores=tags,
    )


def test_gecko_answers_pair_by_question_across_validators_with_tags() -> None:
    old = JobSide(
        job_id="old",
        metric="gecko-image",
        judges=["v1"],
        rows=[validated_row("v1", ["yes", "yes"])],
    )
    new = JobSide(
        job_id="new", metric="gecko-image", judges=["v2"], rows=[validated_row("v2", ["yes", "no"])]
    )
    report = drift_report(old, new)
    assert (report.units.units, report.units.changed, report.units.scale) == (2, 1, "nominal")
    assert [(c.before, c.after) for c in report.units.changes] == [("yes", "no")]
    assert report.changed_rows[0].changes[0].unit == "Is there a red?"
    assert {t.scope: t.change for t in report.tags} == {"tag object": 0.0, "tag color": -1.0}
