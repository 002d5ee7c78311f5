"""Whether a difference between two sides is within the judge's own noise: inside the 95%
spread re-asking the judge alone gives either side's mean (its noise floor), stretched from the
row score's scale to the compared value's."""

from __future__ import annotations

from dataclasses import dataclass

from evalq.comparisons.align import Side
from evalq.core.noise_floor import noise_floor
from evalq.core.row_value import RowValue


@dataclass(frozen=True)
class NoiseMargin:
    """One side's judge-noise spread of its mean on the compared value's scale, and whether
    the pair's difference lies within it."""

    side: str
    job_id: str
    margin: float
    within: bool

    def sentence(self, difference: float, value: RowValue) -> str:
        where = f"{self.side} ({self.job_id})" if self.job_id != self.side else self.side
        return (
            f"within the judge's noise floor of {where}: the difference "
            f"{difference:+.3f} is inside ±{self.margin:.3f}, the 95% spread its mean has from "
            f"re-asking the judge alone ({value.label})"
        )

    def as_dict(self) -> dict[str, object]:
        return {"side": self.side, "job_id": self.job_id, "margin": self.margin,
                "within": self.within}  # fmt: skip


def noise_margins(
    sides: tuple[Side, Side], difference: float | None, value: RowValue
) -> list[NoiseMargin]:
    """Each side's margin, for the sides whose rows have repeats (none without)."""
    out = []
    for side in sides:
        floor = noise_floor(side.rows)
        if floor is None or floor.mean_score_noise_margin is None:
            continue
        margin = floor.mean_score_noise_margin * value.width
        within = difference is not None and abs(difference) <= margin
        out.append(NoiseMargin(side.label, side.job_id, margin, within))
    return out


def within_noise_sentences(
    margins: list[NoiseMargin], difference: float | None, value: RowValue
) -> list[str]:
    """The words a comparison says for each side whose noise the difference is within."""
    if difference is None:
        return []
    return [m.sentence(difference, value) for m in margins if m.within]
