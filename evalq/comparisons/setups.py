"""Were the sides judged alike? A paired difference measures the candidates only when the judge
was the same on both sides: an alias answering as another version, a reworded template, a
thinking budget, the validator mode, the number of samples or another question set moves
scores by itself. So a comparison names every such difference first, and a CI check on it
(--fail-under) refuses to pass on a difference it can not attribute (unless --allow-mixed).

A side's setup is its job's JobSummary.judge_setup (evalq.core.judge_setup), with the model
versions its own rows saw. A setting unknown on a side (a job from before it was recorded, a
metric without it) is not compared: nothing is known to differ.

Question sets (Gecko) are compared on the prompts every side has: the jobs' fingerprints
(JobSummary.question_set) differ as soon as one side has a prompt the other lacks, or a row
that failed before its rubric was written, and neither makes the paired rows unalike. Only a
shared prompt asked other questions does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalq.comparisons.align import Side
from evalq.core.models import RowResult
from evalq.core.versions import merge_versions

# What a line calls each setting, in the order the lines come; a setting a metric adds that is
# not here is named by its key and comes after these.
SETTINGS: dict[str, str] = {
    "judge_models": "judge models",
    "model_versions": "judge model version",
    "templates": "prompt template",
    "thinking": "thinking",
    "validator": "validator mode",
    "samples": "samples",
    "temperature": "temperature",
    "rubric_model": "rubric model",
    "soft": "soft scoring",
}


@dataclass(frozen=True)
class SetupDifference:
    """One setting the sides do not share, with every side's value as shown."""

    setting: str  # the judge_setup key (model_versions, templates, ...)
    what: str  # as a line names it: "judge model version (gemini-2.5-flash)"
    values: dict[str, str]  # side label -> its value

    def line(self) -> str:
        shown = ", ".join(f"{label}={value}" for label, value in self.values.items())
        return f"sides differ in {self.what}: {shown}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "setting": self.setting,
            "what": self.what,
            "values": dict(self.values),
            "line": self.line(),
        }


def side_setup(job_setup: Mapping[str, Any], rows: Iterable[RowResult]) -> dict[str, Any]:
    """A side's setup: its job's, with the versions its own rows were judged by (one candidate
    of a job may have been judged before the alias moved, another after)."""
    return {**job_setup, "model_versions": merge_versions(r.model_versions for r in rows)}


def sides_differences(sides: Sequence[Side]) -> list[SetupDifference]:
    """Every way the sides were not judged alike: their setups, then their question sets."""
    found = setup_differences({side.label: side.setup for side in sides})
    asked = question_set_difference(sides)
    return [*found, asked] if asked is not None else found


def setup_differences(setups: Mapping[str, Mapping[str, Any]]) -> list[SetupDifference]:
    """Every setting known on every side whose value is not the same on all of them (a
    mapping setting, such as templates or versions per model, key by key), in SETTINGS
    order. `setups`: side label -> its setup."""
    if len(setups) < 2:
        return []
    keys = {key for setup in setups.values() for key in setup}
    ordered = [k for k in SETTINGS if k in keys] + sorted(keys - SETTINGS.keys())
    return [d for key in ordered for d in _differences(key, setups)]


def _differences(key: str, setups: Mapping[str, Mapping[str, Any]]) -> list[SetupDifference]:
    values = {label: setup.get(key) for label, setup in setups.items()}
    if not all(_known(v) for v in values.values()):
        return []
    what = SETTINGS.get(key, key.replace("_", " "))
    mappings = [v for v in values.values() if isinstance(v, Mapping)]
    if len(mappings) == len(values):
        parts = sorted({str(part) for mapping in mappings for part in mapping})
        found = [_difference(key, f"{what} ({p})", _part(values, p)) for p in parts]
    else:
        found = [_difference(key, what, values)]
    return [d for d in found if d is not None]


def _part(values: Mapping[str, Any], part: str) -> dict[str, Any]:
    """Each side's value of one key of a mapping setting (None where it has none)."""
    return {label: value.get(part) for label, value in values.items()}


def _difference(key: str, what: str, values: Mapping[str, Any]) -> SetupDifference | None:
    """The difference, if every side knows the value and they do not all agree."""
    if not all(_known(v) for v in values.values()):
        return None
    shown = {label: _shown(v) for label, v in values.items()}
    return SetupDifference(key, what, shown) if len(set(shown.values())) > 1 else None


def _known(value: Any) -> bool:
    return value is not None and value not in ("", [], {})


def _shown(value: Any) -> str:
    """A value as a line says it: lists joined, booleans on/off, mappings key=value."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}={_shown(v)}" for k, v in sorted(value.items()))
    if isinstance(value, list | tuple):
        return ", ".join(_shown(v) for v in value)
    return str(value)


def question_set_difference(sides: Sequence[Side]) -> SetupDifference | None:
    """The sides' question sets, when every side has one, they differ, and some prompt every
    side has was asked other questions on one of them; named by the jobs' fingerprints."""
    fingerprints = {side.label: side.question_set for side in sides}
    if len(sides) < 2 or not all(fingerprints.values()) or len(set(fingerprints.values())) < 2:
        return None
    asked = [_asked(side.rows) for side in sides]
    shared = set.intersection(*(set(prompts) for prompts in asked))
    other = sum(1 for prompt in shared if len({frozenset(a[prompt]) for a in asked}) > 1)
    if not other:
        return None
    what = f"question set ({other} of {len(shared)} shared prompts asked other questions)"
    return SetupDifference("question_set", what, {k: str(v) for k, v in fingerprints.items()})


def _asked(rows: Iterable[RowResult]) -> dict[str, set[str]]:
    """Prompt -> the fingerprints of the question sets its rows were scored on."""
    asked: defaultdict[str, set[str]] = defaultdict(set)
    for row in rows:
        if row.question_set is not None:
            asked[row.prompt].add(row.question_set)
    return asked
