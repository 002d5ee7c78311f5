"""A job's noise floor read from its rows' repeats (evalq/core/noise_floor.py); pure."""

from __future__ import annotations

import math

import pytest

from evalq.core.counters import JobCounters
from evalq.core.models import NOISE_Z, Repeats, RowResult, Sample
from evalq.core.noise_floor import NO_REFERENCE, noise_floor, score_value
from evalq.core.summary import build_summary
from evalq.stats.intervals import wilson
from tests.support.job_configs import job_config


def half_scored_row(line: int, *repeats: Repeats, **extra: object) -> RowResult:
    return RowResult(
        id=str(line),
        line=line,
        prompt="p",
        status="scored",
        score=0.5,
        repeats=list(repeats),
        extra=dict(extra),
    )


def repeated_rating(*ratings: str | None, judge: str = "j1", decided: bool = True) -> Repeats:
    return Repeats(
        unit="rating",
        judge_model=judge,
        samples=[Sample(answer=r) for r in ratings],
        decided=decided,
    )


def test_no_repeats_no_noise_floor() -> None:
    assert noise_floor([half_scored_row(0), half_scored_row(1, repeated_rating("3"))]) is None


def test_ratings_give_interval_alpha_split_share_and_the_means_noise() -> None:
    rows = [
        half_scored_row(0, repeated_rating("5", "5", "5")),
        half_scored_row(1, repeated_rating("1", "3", None, decided=False)),
    ]
    floor = noise_floor(rows)
    assert floor is not None
    assert (floor.units, floor.samples, floor.undecided) == (2, 5, 1)
    assert floor.split_share == 0.5
    assert floor.split_ci95 == wilson(1, 2)
    # Interval alpha: units (5, 5, 5) and (1, 3). Coincidences: o_55 = 3 * 2 / 2 = 3,
    # o_13 = o_31 = 1. n = 5; D_o = 2 * (1 - 3)^2 = 8; the expected sum
    # 2 * (n_5 n_1 (4^2) + n_5 n_3 (2^2) + n_1 n_3 (2^2)) = 2 * (48 + 12 + 4) = 128;
    # alpha = 1 - 4 * 8 / 128 = 0.75.
    assert floor.alpha_level == "interval"
    assert floor.alpha == pytest.approx(0.75)
    # On the score's scale the second unit is (0, 0.5): s2 = 0.125 over 2 samples; the first
    # has none. Two rows: sqrt(0.0625) / 2.
    assert floor.mean_score_noise_se == pytest.approx(math.sqrt(0.0625) / 2)
    assert floor.mean_score_noise_margin == pytest.approx(NOISE_Z * 0.125)
    assert floor.order_units == 0 and floor.order_disagreement is None
    assert floor.panel is None


def test_pairwise_answers_are_nominal_and_their_orders_compared() -> None:
    def comparison(*answers: tuple[str, str]) -> Repeats:
        return Repeats(unit="A vs B", samples=[Sample(answer=a, order=o) for o, a in answers])

    rows = [
        half_scored_row(0, comparison(("AB", "A"), ("BA", "A"))),
        half_scored_row(1, comparison(("AB", "A"), ("BA", "B"))),
        half_scored_row(2, comparison(("AB", "tie"), ("BA", "tie"))),
    ]
    floor = noise_floor(rows)
    assert floor is not None
    assert floor.alpha_level == "nominal"
    assert (floor.order_units, floor.order_disagreement) == (3, pytest.approx(1 / 3))
    assert floor.split_share == pytest.approx(1 / 3)


def test_answers_read_on_the_score_scale() -> None:
    assert [score_value(a) for a in ("1", "5", "3", "yes", "No", "A", "SAME", "B", "c")] == [
        0.0,
        1.0,
        0.5,
        1.0,
        0.0,
        1.0,
        0.5,
        0.0,
        None,
    ]


def test_a_panel_without_a_reference_says_why_it_has_no_figures() -> None:
    rows = [half_scored_row(0, repeated_rating("4", "4"), repeated_rating("2", "3", judge="j2"))]
    floor = noise_floor(rows)
    assert floor is not None and floor.panel is not None
    assert floor.panel.judges == ["j1", "j2"]
    assert floor.panel.error_correlation is None
    assert floor.panel.note == NO_REFERENCE


def test_a_panels_errors_against_the_human_column() -> None:
    # Errors (judge mean - human): j1 +1, -1, 0; j2 +2, -2, 0 (r = 1); j3 -1, +1, 0 (r = -1
    # with both). Mean r = -1/3; Kish: 3 / (1 - 2/3) = 9.
    ratings = {"j1": ["4", "2", "3"], "j2": ["5", "1", "3"], "j3": ["2", "4", "3"]}
    rows = [
        half_scored_row(
            i,
            *(repeated_rating(r[i], r[i], judge=j) for j, r in ratings.items()),
            human=3,
        )
        for i in range(3)
    ]
    floor = noise_floor(rows, "human")
    assert floor is not None and floor.panel is not None
    assert floor.panel.reference == "human"
    assert floor.panel.units == 3
    assert floor.panel.error_correlation == pytest.approx(-1 / 3)
    assert floor.panel.effective_judges == pytest.approx(9.0)


def test_the_summary_carries_the_noise_floor_and_it_reads_back_from_json() -> None:
    rows = [half_scored_row(i, repeated_rating("4", "5")) for i in range(3)]
    counters = JobCounters(status="finished", rows_done=3, rows_scored=3)
    summary = build_summary(job_config("pointwise", rows_total=3), counters, {}, rows, now=1.0)
    assert summary.noise_floor is not None
    assert summary.noise_floor.split_share == 1.0
    back = type(summary).model_validate_json(summary.model_dump_json())
    assert back.noise_floor == summary.noise_floor
    plain = build_summary(job_config("pointwise", rows_total=0), counters, {}, [], now=1.0)
    assert plain.noise_floor is None
