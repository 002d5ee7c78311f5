"""Repeated samples of one unit, fixed (`--samples K`) or adaptive (`--samples auto`): the option
as a budget, a unit asking again while its verdict is undecided (each sample its own call and
cache key), and the samples as the Repeats a row carries."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from evalq.core.errors import DatasetError
from evalq.core.models import Repeats, Sample, Verdict
from evalq.stats.adaptive import (
    MAX_SAMPLES,
    MAX_SAMPLES_LIMIT,
    MIN_SAMPLES,
    Budget,
    Decision,
    earliest_stop,
)

MAX_FIXED_SAMPLES = 50
SAMPLED_TEMPERATURE = 0.7  # repeated samples at temperature 0 would only repeat one answer
_AUTO = re.compile(r"auto(?::(\d+))?")
SAMPLES_HELP = (
    f"a whole number from 1 to {MAX_FIXED_SAMPLES}, 'auto' (ask again only while the verdict "
    f"is undecided, at most {MAX_SAMPLES} times) or 'auto:N' (at most N, {MIN_SAMPLES} to "
    f"{MAX_SAMPLES_LIMIT})"
)


def budget_of(value: Any) -> Budget:
    """The samples option as a budget: absent is one sample; K is K, every one asked; "auto"
    and "auto:N" ask at most 8 (or N) times, and at least as many as can settle a verdict."""
    if value is None:
        return Budget(1, 1, adaptive=False)
    if isinstance(value, int) and not isinstance(value, bool):
        if 1 <= value <= MAX_FIXED_SAMPLES:
            return Budget(value, value, adaptive=False)
    elif isinstance(value, str) and (match := _AUTO.fullmatch(value.strip())):
        most = int(match.group(1)) if match.group(1) else MAX_SAMPLES
        if MIN_SAMPLES <= most <= MAX_SAMPLES_LIMIT:
            return Budget(earliest_stop(MIN_SAMPLES, most), most, adaptive=True)
    raise DatasetError(f"samples must be {SAMPLES_HELP}, got {value!r}")


def known_samples(value: int | str | None) -> int | str | None:
    """The samples option as an options model checks it (a count, auto or auto:N)."""
    try:
        budget_of(value)
    except DatasetError:
        raise PydanticCustomError("samples", "must be {what}", {"what": SAMPLES_HELP}) from None
    return value


# The samples option of a metric whose verdicts are votes: --samples K, auto or auto:N.
SamplesOption = Annotated[int | str | None, AfterValidator(known_samples)]
SAMPLES_FLAG_HELP = (
    "Pointwise/pairwise/rank/Gecko/groundedness: ask each verdict K times, or 'auto' to ask "
    "again only while it is undecided (at most 8 times; 'auto:N' at most N)."
)


def ask_until_settled(
    index: int,
    budget: Budget,
    ask: Callable[[int], Verdict],
    decide: Callable[[list[Verdict]], Decision],
    *,
    step: int = 1,
) -> Verdict:
    """One adaptive unit: sample k is ``ask(k)``, from 0 up, until ``decide`` stops it (looked
    at every ``step`` samples: pairwise asks both orders before it looks). The unit's verdict
    carries every sample's verdict and the decision (``value["samples"]``, ``["decision"]``);
    it is ok when the samples settle on a verdict or at least one was scored. Rate limits and
    spent quotas propagate from ``ask``: the samples already answered are in the call cache."""
    taken: list[Verdict] = []
    decision = decide(taken)
    for k in range(budget.max_samples):
        taken.append(ask(k))
        looks = budget.adaptive and (k + 1) % step == 0  # a fixed count asks every sample
        if looks or k + 1 == budget.max_samples:
            decision = decide(taken)
            if decision.stop:
                break
    scored = [v for v in taken if v.status == "ok"]
    first = taken[0]
    value = {
        "samples": [v.model_dump(mode="json") for v in taken],
        "decision": decision_dict(decision, len(taken)),
    }
    if not scored:
        return first.model_copy(update={"index": index, "value": value})
    return Verdict(
        index=index,
        status="ok",
        answer=decision.verdict,
        value=value,
        judge_model=first.judge_model,
        simulated=any(v.simulated for v in taken),
    )


def decision_dict(decision: Decision, samples: int) -> dict[str, Any]:
    return {
        "samples": samples,
        "verdict": decision.verdict,
        "decided": decision.decided,
        "certainty": decision.certainty,
        "interval": list(decision.interval) if decision.interval else None,
        "rule": decision.rule,
    }


def sample_verdicts(verdict: Verdict) -> list[Verdict] | None:
    """The per-sample verdicts of an adaptive unit (ask_until_settled); None for a unit asked
    once. A sample's index is its unit's."""
    value = verdict.value
    if not isinstance(value, dict) or not isinstance(value.get("samples"), list):
        return None
    return [Verdict.model_validate(item) for item in value["samples"]]


def stored_decision(verdict: Verdict) -> dict[str, Any] | None:
    value = verdict.value
    decision = value.get("decision") if isinstance(value, dict) else None
    return decision if isinstance(decision, dict) else None


def repeats_of(
    unit: str,
    judge: str | None,
    samples: Sequence[Sample],
    decision: Decision | dict[str, Any],
) -> Repeats:
    """A unit's samples and how sure their verdict is, as a row carries them."""
    said = decision if isinstance(decision, dict) else decision_dict(decision, len(samples))
    interval = said.get("interval")
    return Repeats(
        unit=unit,
        judge_model=judge,
        samples=list(samples),
        verdict=said.get("verdict"),
        decided=bool(said.get("decided")),
        certainty=said.get("certainty"),
        interval=(float(interval[0]), float(interval[1])) if interval else None,
        rule=said.get("rule"),
    )
