"""Reply schemas and parsers for ratings (1-5) and pairwise choices (A / SAME / B).

The judge is asked for a structured reply whose explanation comes before the verdict, so the
model reasons before it commits. The verdict is read from that structure only: JSON (whole,
fenced, or embedded in a little prose), or a bare enum value that is the entire reply (how
``text/x.enum`` replies arrive: "4", "B", "SAME"). A number mentioned in prose is never taken
for a rating. Anything else, and any rating outside 1-5, raises UnparseableReply, which the
metrics turn into an unscored verdict: a reply we cannot read is never scored as 0.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, Field

from evalq.core.errors import UnparseableReply
from evalq.core.replies import clip, extract_json, hedge, options_named

RATING_MIN = 1
RATING_MAX = 5
Choice = Literal["A", "SAME", "B"]
CHOICES: tuple[Choice, ...] = ("A", "SAME", "B")
VerdictT = TypeVar("VerdictT", int, Choice)
_RATING_KEYS = ("rating", "score", "Rating", "Score")
_CHOICE_KEYS = ("pairwise_choice", "choice", "preference", "verdict", "winner")
_EXPLANATION_KEYS = ("explanation", "reasoning", "rationale", "Explanation")
_NUMBER_RE = re.compile(r"^[+-]?\d+(?:\.\d+)?$")
_BARE_RE = re.compile(r"^[\s\"'`*]*(?P<value>[A-Za-z]+|[+-]?\d+(?:\.\d+)?)[\s\"'`*.]*$")
# Several ratings or choices named as one verdict ("3 or 4", "3-4", "A/B", "A|SAME|B") hedge.
# "4/5" reads as four out of five, so "/" joins no ratings.
_RATING_OPTION_RE = re.compile(r"[\s\"'`*_(\[]*(?P<o>\d+(?:\.\d+)?)(?![\d.])[)\]\"'`*_]*")
_RATING_EITHER_RE = re.compile(r"\s*(?:-|–|—|\||\bor\b|\bto\b)", re.IGNORECASE)
_CHOICE_OPTION_RE = re.compile(
    r"[\s\"'`*_(\[]*(?P<o>A|B|SAME)(?![A-Za-z0-9])[)\]\"'`*_]*", re.IGNORECASE
)
_CHOICE_EITHER_RE = re.compile(r"\s*(?:/|\||\\|\bor\b|\bvs\.?)", re.IGNORECASE)


class RatingReply(BaseModel):
    """The pointwise response schema: the explanation first, then the rating."""

    explanation: str = Field(
        description="Your assessment of the response against each criterion, written first."
    )
    rating: int = Field(
        ge=RATING_MIN, le=RATING_MAX, description="The rating from the scale, 1 (worst) to 5."
    )


class PairwiseReply(BaseModel):
    """The pairwise response schema: the explanation first, then A, SAME or B."""

    explanation: str = Field(description="Your analysis of both responses, written first.")
    pairwise_choice: Choice = Field(
        description='"A" if Response A is better, "B" if Response B is better, "SAME" if equal.'
    )


@dataclass(frozen=True)
class Parsed(Generic[VerdictT]):
    """A verdict read from a reply (a rating or a choice) with the judge's explanation."""

    verdict: VerdictT
    explanation: str


def _bare_value(text: str) -> str | None:
    """The whole reply as one enum value ("4", '"B"', "SAME."), or None."""
    m = _BARE_RE.match(text)
    return m.group("value") if m else None


@dataclass(frozen=True)
class _Options:
    """How one kind of verdict names an option, to tell a hedge ("3 or 4") from a verdict."""

    option: re.Pattern[str]
    either: re.Pattern[str]

    def refuse_hedge(self, text: str, raw: str) -> None:
        """Raise if ``text`` opens with several options, or names them after a label."""
        starts = [0, *(m.end() for m in re.finditer(r"[:=]", text))]
        for start in starts:
            named = options_named(text[start:], self.option, self.either)
            if len(named) > 1:
                raise hedge(named, raw)

    def refuse_list(self, value: Any, raw: str) -> None:
        if isinstance(value, list) and len(value) > 1:
            raise hedge([str(v) for v in value], raw)


_RATINGS = _Options(_RATING_OPTION_RE, _RATING_EITHER_RE)
_CHOICES = _Options(_CHOICE_OPTION_RE, _CHOICE_EITHER_RE)


def _explanation(data: dict[str, Any]) -> str:
    for key in _EXPLANATION_KEYS:
        value = data.get(key)
        if isinstance(value, str):
            return value
    return ""


def _verdict_field(data: dict[str, Any], keys: tuple[str, ...], field: str, raw: str) -> Any:
    """The value under the first of ``keys`` the reply has: judges name the field variously."""
    for key in keys:
        if key in data:
            return data[key]
    raise UnparseableReply(f"JSON reply has no {field} field", raw=clip(raw))


def _as_rating(value: Any, raw: str) -> int:
    if isinstance(value, bool):
        raise UnparseableReply(f"rating is a boolean ({value})", raw=clip(raw))
    _RATINGS.refuse_list(value, raw)
    if isinstance(value, str):
        bare = _bare_value(value)
        if bare is None or not _NUMBER_RE.match(bare):
            _RATINGS.refuse_hedge(value, raw)
            raise UnparseableReply(f"rating {value!r} is not a number", raw=clip(raw))
        value = float(bare)
    if not isinstance(value, int | float):
        raise UnparseableReply(f"rating has type {type(value).__name__}", raw=clip(raw))
    if not math.isfinite(value):
        raise UnparseableReply(f"rating {value} is not a number", raw=clip(raw))
    if value != int(value):
        raise UnparseableReply(f"rating {value} is not a whole number", raw=clip(raw))
    rating = int(value)
    if not RATING_MIN <= rating <= RATING_MAX:
        raise UnparseableReply(
            f"rating {rating} is outside the scale {RATING_MIN}-{RATING_MAX}", raw=clip(raw)
        )
    return rating


def _structured(text: str, options: _Options) -> Any:
    """The reply's JSON value, or its bare enum value; UnparseableReply for anything else
    (saying so when the reply hedges between options)."""
    if not isinstance(text, str) or not text.strip():
        raise UnparseableReply("empty reply", raw=text if isinstance(text, str) else None)
    bare = _bare_value(text)
    if bare is not None:
        return bare
    try:
        return extract_json(text)
    except UnparseableReply:
        options.refuse_hedge(text, text)
        raise UnparseableReply(
            "the reply is neither the structured JSON asked for nor a bare value", raw=clip(text)
        ) from None


def parse_rating(text: str) -> Parsed[int]:
    """Read a 1-5 rating from {"explanation", "rating"} JSON or a bare "4"."""
    data = _structured(text, _RATINGS)
    if isinstance(data, str | int | float) and not isinstance(data, bool):
        return Parsed(_as_rating(data, text), "")
    if isinstance(data, dict):
        value = _verdict_field(data, _RATING_KEYS, "rating", text)
        return Parsed(_as_rating(value, text), _explanation(data))
    raise UnparseableReply(f"JSON reply is a {type(data).__name__}, not an object", clip(text))


def _as_choice(value: Any, raw: str) -> Choice:
    _CHOICES.refuse_list(value, raw)
    if isinstance(value, str):
        word = value.strip().strip("\"'`*.").upper()
        for choice in CHOICES:
            if word == choice:
                return choice
        _CHOICES.refuse_hedge(value, raw)
    raise UnparseableReply(f"choice {value!r} is not one of A, SAME, B", raw=clip(raw))


def parse_choice(text: str) -> Parsed[Choice]:
    """Read A / SAME / B from {"explanation", "pairwise_choice"} JSON or a bare "B"."""
    data = _structured(text, _CHOICES)
    if isinstance(data, str):
        return Parsed(_as_choice(data, text), "")
    if isinstance(data, dict):
        value = _verdict_field(data, _CHOICE_KEYS, "pairwise_choice", text)
        return Parsed(_as_choice(value, text), _explanation(data))
    raise UnparseableReply(
        f"JSON reply is {json.dumps(data)[:40]}, not an object or A/SAME/B", raw=clip(text)
    )
