"""Typed plans: each metric's plan model survives the JSON round trip the store gives it, and a
stored plan that does not fit (damaged, another metric's, or written by an older evalq whose
plans were untyped dicts) fails with a message that says so."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evalq.core.errors import StoredPlanError
from evalq.core.metric import Plan, get_metric, load_plan
from evalq.core.models import Coverage, Question, Rubric
from evalq.core.registry import metric_names
from evalq.metrics.gecko.metric import BatchUnit, GeckoPlan, QuestionUnit
from evalq.metrics.groundedness.metric import GroundednessPlan, JudgeUnit
from evalq.metrics.pairwise.comparisons import ComparisonUnit
from evalq.metrics.pairwise.metric import PairwisePlan
from evalq.metrics.pointwise.metric import PointwisePlan, RatingUnit
from evalq.metrics.ranking.plan import RankPlan, RankUnit

RUBRIC = Rubric(
    questions=[Question(question="Is there a circle?", expected="yes", tag="object")],
    coverage=Coverage(keywords=["circle"]),
    template_version="gecko-image-rubric/2",
    judge_model="judge-a",
)
RATING = {"template": "fluency", "template_version": "v", "judges": ["a"], "samples": 1}

PLANS: dict[str, Plan[Any]] = {
    "gecko-image": GeckoPlan(
        units=[
            QuestionUnit(index=0, judge_model="a", question=0),
            BatchUnit(index=1, judge_model="b", questions=1),
        ],
        rubric=RUBRIC,
        validator="per-question",
        validator_template="gecko-image-validator/1",
        judges=["a", "b"],
        rubric_model="a",
        simulated=True,
    ),
    "groundedness": GroundednessPlan(
        units=[JudgeUnit(index=0, judge_model="a")],
        judges=["a"],
        judge_template="groundedness-judge/2",
        response="Apples are red.",
        response_source="candidate",
        candidate_model="m",
        candidate_template="groundedness-answer/2",
        candidate_finish_reason="STOP",
    ),
    "pointwise": PointwisePlan(units=[RatingUnit(index=0, judge="a", sample=0)], **RATING),
    "pairwise": PairwisePlan(
        units=[
            ComparisonUnit(index=0, judge="a", sample=0, order="original"),
            ComparisonUnit(index=1, judge="a", sample=0, order="swapped"),
        ],
        **RATING,
    ),
    "rank": RankPlan(
        units=[RankUnit(index=0, judge="a", sample=0, a="x", b="y", order="original")],
        candidates=["x", "y"],
        generated={"y": "generated"},
        bootstrap=10,
        seed=1,
        **RATING,
    ),
}
PLANS["gecko-video"] = PLANS["gecko-image"]
PLANS["rubric"] = PLANS["gecko-image"]


def test_every_metric_names_its_plan_model() -> None:
    assert set(PLANS) == set(metric_names())
    for name, plan in PLANS.items():
        assert get_metric(name).plan_model is type(plan)


@pytest.mark.parametrize("name", sorted(PLANS))
def test_a_plan_round_trips_as_its_typed_model(name: str) -> None:
    plan = PLANS[name]
    loaded = load_plan(get_metric(name).plan_model, plan.model_dump_json(), "row 1")
    assert loaded == plan
    assert type(loaded) is type(plan)
    assert [type(u) for u in loaded.units] == [type(u) for u in plan.units]


def test_gecko_units_keep_their_kind_through_the_round_trip() -> None:
    loaded = load_plan(GeckoPlan, PLANS["gecko-image"].model_dump_json(), "row 1")
    question, batch = loaded.units
    assert isinstance(question, QuestionUnit) and question.question == 0
    assert isinstance(batch, BatchUnit) and batch.questions == 1
    assert loaded.rubric == RUBRIC


def test_a_plan_written_by_the_untyped_evalq_fails_clearly() -> None:
    old = {
        "units": [{"index": 0, "kind": "question", "data": {"judge_model": "a", "question": 0}}],
        "data": {"rubric": RUBRIC.model_dump(), "validator": "per-question", "judges": ["a"]},
        "simulated": False,
    }
    with pytest.raises(StoredPlanError) as caught:
        load_plan(GeckoPlan, json.dumps(old), "job j, row on line 3")
    message = str(caught.value)
    assert message.startswith("job j, row on line 3: the stored plan does not fit GeckoPlan")
    assert "units.0.question.judge_model: Field required" in message
    assert "older evalq" in message


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("{not json", "(the plan)"),
        (PLANS["pointwise"].model_dump_json(), "units.0"),  # another metric's plan
        (PLANS["pairwise"].model_dump_json().replace('"swapped"', '"sideways"'), "order"),
    ],
)
def test_a_malformed_stored_plan_fails_naming_where(text: str, where: str) -> None:
    model = get_metric("pairwise" if "sideways" in text else "gecko-image").plan_model
    with pytest.raises(StoredPlanError, match="the stored plan does not fit") as caught:
        load_plan(model, text, "row 1")
    assert where in str(caught.value)
