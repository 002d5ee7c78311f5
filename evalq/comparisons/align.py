"""Which row of one result set is which row of another.

Two jobs over the same dataset share ids, so rows pair by id. Two datasets written apart (one
file per model) may number their rows differently but hold the same prompts, so rows pair by
prompt. Ids pair only when they mean the same thing: every shared id must carry the same
prompt on both sides, else the ids are the default ones (ordinals) of different files and
prompts decide.
A repeated id or prompt pairs by occurrence (the second "a red circle" with the second).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evalq.core.models import RowResult

AlignBy = Literal["id", "prompt"]
ALIGN_BY: tuple[str, ...] = ("id", "prompt")
Key = tuple[str, int]  # (id or prompt, occurrence)


@dataclass(frozen=True)
class Side:
    """One candidate's rows: a job, or one candidate of a multi-candidate job."""

    label: str
    rows: Sequence[RowResult]
    job_id: str = ""
    candidate: str | None = None
    metric: str = ""
    simulated: bool = False
    # What the side cost: its job's priced spend in USD (None: a model without a known
    # price, or not read). A candidate of a multi-candidate job shares its job's cost with the
    # job's other candidates (cost_shared_with names them); it is never split by guesswork.
    cost_usd: float | None = None
    cost_shared_with: tuple[str, ...] = ()
    cost_note: str | None = None
    # How the side was judged (evalq.comparisons.setups.side_setup): judge models, versions,
    # templates, thinking...; empty when not read, and then nothing is compared.
    setup: Mapping[str, Any] = field(default_factory=dict)
    question_set: str | None = None  # its job's (JobSummary.question_set), Gecko's


@dataclass(frozen=True)
class Alignment:
    """Rows of every side under one key; None where a side has no such row."""

    by: AlignBy
    keys: list[Key]
    rows: dict[Key, list[RowResult | None]]
    note: str | None = None
    counts: dict[str, int] = field(default_factory=dict)  # per side label: rows without a match


def keyed(rows: Sequence[RowResult], by: AlignBy) -> dict[Key, RowResult]:
    """Rows by key. A row rejected when the dataset was read has no prompt: by prompt it
    pairs with nothing (it is counted as unpaired), rather than with other rejected rows."""
    seen: Counter[str] = Counter()
    out: dict[Key, RowResult] = {}
    for row in sorted(rows, key=lambda r: r.line):
        name = row.id if by == "id" else (row.prompt or f"\0no prompt, line {row.line}")
        out[(name, seen[name])] = row
        seen[name] += 1
    return out


def ids_agree(sides: Sequence[Side]) -> bool:
    """Every side shares ids with the first, and each shared id names the same prompt (a row
    rejected at load has no prompt to check, so it does not count against the ids)."""
    first = keyed(sides[0].rows, "id")
    for side in sides[1:]:
        other = keyed(side.rows, "id")
        shared = first.keys() & other.keys()
        if not shared or any(
            first[k].prompt != other[k].prompt and first[k].prompt and other[k].prompt
            for k in shared
        ):
            return False
    return True


def choose(sides: Sequence[Side], by: AlignBy | None = None) -> tuple[AlignBy, str | None]:
    if by is not None:
        return by, None
    if ids_agree(sides):
        return "id", None
    return (
        "prompt",
        "ids differ between the sides (or name different prompts): rows paired by prompt",
    )


def align(sides: Sequence[Side], by: AlignBy | None = None) -> Alignment:
    if len(sides) < 2:
        raise ValueError("a comparison needs at least two sides")
    chosen, note = choose(sides, by)
    tables = [keyed(side.rows, chosen) for side in sides]
    keys = list(dict.fromkeys(k for table in tables for k in table))
    rows = {k: [table.get(k) for table in tables] for k in keys}
    unmatched = {
        side.label: sum(1 for k in table if any(k not in t for t in tables))
        for side, table in zip(sides, tables, strict=True)
    }
    return Alignment(chosen, keys, rows, note, unmatched)
