"""What every reply parser shares: finding JSON in a reply, reading a run of named options as a
hedge, and clipping the raw text an UnparseableReply carries (so one bad reply can't bloat a
stored result). The metric parsers (evalq.metrics.*.parsing) build on these."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from evalq.core.errors import UnparseableReply

M = TypeVar("M", bound=BaseModel)

_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
# Between two options of a hedge or of an echoed template: "yes or no", "yes/no", "a|b|c|d|e"
# always; "yes, no" or "a and b" only where the run of options ends the clause ("Yes, no
# doubt." is a yes).
_EITHER_RE = re.compile(r"\s*(?:/|\||\\|\bor\b)", re.IGNORECASE)
_AND_RE = re.compile(r"\s*(?:,|;|&|\band\b)", re.IGNORECASE)
_CLAUSE_END_RE = re.compile(r"\s*(?:[.,;:!?)\]]|$)")
MAX_RAW = 4000


def clip(text: str) -> str:
    return text if len(text) <= MAX_RAW else text[:MAX_RAW] + "…"


def extract_json(text: str) -> Any:
    """Find a JSON value in a reply: whole text, a fenced block, or the outermost {...}/[...]."""
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE_RE.finditer(text)]
    for open_ch, close_ch in (("{", "}"), ("[", "]")):
        start, end = text.find(open_ch), text.rfind(close_ch)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    for candidate in candidates:
        if not candidate:
            continue
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):
            continue
    raise UnparseableReply("no JSON value found in the reply", raw=clip(text))


def options_named(
    text: str, option: re.Pattern[str], either_re: re.Pattern[str] = _EITHER_RE
) -> list[str]:
    """The options a verdict opens with, when it names several in a row ("yes or no",
    "a|b|c|d|e", "(a) or (b)", "3-4"); one option otherwise. ``option`` has a group "o";
    ``either_re`` is what joins alternatives (the rating parser adds "3-4", drops "4/5")."""
    first = option.match(text)
    if first is None:
        return []
    found, end, joined_by_and = [first.group("o").lower()], first.end(), False
    while True:
        either = either_re.match(text, end)
        sep = either or _AND_RE.match(text, end)
        after = option.match(text, sep.end()) if sep is not None else None
        if sep is None or after is None:
            break
        found.append(after.group("o").lower())
        end, joined_by_and = after.end(), joined_by_and or either is None
    if len(set(found)) < 2 or (joined_by_and and not _CLAUSE_END_RE.match(text, end)):
        return found[:1]
    return found


def hedge(named: list[str], text: str) -> UnparseableReply:
    """A reply that names more than one option has given no verdict."""
    return UnparseableReply(
        f"the reply hedges: it names more than one option ({' / '.join(dict.fromkeys(named))})",
        raw=clip(text),
    )


def fitted(model: type[M], data: Any, what: str, text: str) -> M:
    """`data` as `model`, or the reply unparseable, naming where it first leaves the schema."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UnparseableReply(
            f"{what} does not fit the schema at {where}: {first['msg']}", raw=clip(text)
        ) from None
