"""The drift report of two jobs on the same inputs judged by two judges: what changed, how far
the judges agree, how the score and the candidates' order would move, and whether it is more
than the judge's own noise (the rule is DRIFT_RULE; docs/guides/comparing.md says how to read
it)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from evalq.comparisons.drift.ranking import ranking_drift
from evalq.comparisons.drift.report import (
    Change,
    ChangedRow,
    ChangedUnit,
    DriftReport,
    HumanSide,
    HumanVerdict,
    Kappa,
    Noise,
    ScoreChange,
    UnitDrift,
    Verdict,
)
from evalq.comparisons.drift.units import (
    JobSide,
    RowKey,
    RowPair,
    UnitPairs,
    is_numeric,
    pair_rows,
    unit_pairs,
)
from evalq.comparisons.paired_rows import PairedRow
from evalq.comparisons.paired_rows import pair_rows as pair_values
from evalq.comparisons.values import value_for
from evalq.core.human.label_stats import cohen_kappa
from evalq.core.models import HumanAgreement, Repeats
from evalq.core.noise_floor import noise_floor
from evalq.core.row_value import RowValue
from evalq.stats.agreement import krippendorff_alpha
from evalq.stats.drift import flip_share, retest_disagreement, share_difference
from evalq.stats.noise import Share
from evalq.stats.paired import PAIRED_SEED, compare_paired

DRIFT_RULE = (
    "drift beyond noise when the 95% interval of the flip share minus the judge's own flip "
    "share (the share of units the old judge answers differently when asked again: from a "
    "retest, else from the jobs' repeats) lies above 0, by Newcombe's hybrid score interval "
    "for the difference of two independent shares"
)
TOP_ROWS = 10
REPEATS_NOTE = (
    "from repeats: the chance that two single samples of a unit differ; a verdict settled from "
    "several samples changes less often, so for such verdicts this noise is on the high side"
)


def drift_report(
    old: JobSide,
    new: JobSide,
    *,
    retest: JobSide | None = None,
    seed: int = PAIRED_SEED,
    group_by: Sequence[str] = (),
    top: int = TOP_ROWS,
) -> DriftReport:
    """The report of ``new`` against ``old`` (the same inputs; the caller checks them), with
    ``retest`` (the old judge on some of the same rows again) as the noise where given."""
    value, _ = value_for([old.metric, new.metric])
    pairs = pair_rows(old, new)
    units = unit_pairs(pairs, old, new)
    paired = [p for p in pairs if p.old is not None and p.new is not None]
    by_key = {p.key: pair_values((p.key[0], p.key[2]), p.new, p.old, value) for p in paired}
    by_key = {k: r for k, r in by_key.items() if r.status == "paired"}
    scored = list(by_key.values())
    report = DriftReport(
        old_job=old.job_id,
        new_job=new.job_id,
        metric=old.metric,
        old_judge=", ".join(old.judges),
        new_judge=", ".join(new.judges),
        old_versions=list(old.versions),
        new_versions=list(new.versions),
        simulated=old.simulated or new.simulated,
        value=value.label,
        rows_paired=len(paired),
        rows_only_old=sum(p.new is None for p in pairs),
        rows_only_new=sum(p.old is None for p in pairs),
        units=unit_drift(units, seed),
        score=score_change("all", scored, value, seed),
        tags=tag_changes(scored, value, seed),
        groups=group_changes(scored, [*old.group_by, *group_by], value, seed),
        ranking=ranking_drift(paired, value, seed),
        changed_rows=changed_rows(units, by_key, top),
        noise=noise_of(old, new, retest, value, seed),
        verdict=Verdict(drift=None, line="", rule=DRIFT_RULE),
        human=human_verdict(old.human, new.human),
        seed=seed,
    )
    verdict = decide(report.units, report.noise)
    return report.model_copy(update={"verdict": verdict})


def unit_drift(units: UnitPairs, seed: int) -> UnitDrift:
    n = len(units.old)
    changed = sum(a != b for a, b in zip(units.old, units.new, strict=True))
    share = flip_share(changed, n)
    ordinal = is_numeric(units.old + units.new)
    ways = Counter((a, b) for a, b in zip(units.old, units.new, strict=True) if a != b)
    return UnitDrift(
        units=n,
        changed=changed,
        share=None if share is None else share.value,
        ci95=None if share is None else share.ci95,
        scale="ordinal" if ordinal else "nominal",
        changes=[Change(before=a, after=b, units=k) for (a, b), k in ways.most_common()],
        kappa=kappa_of(units.old, units.new, ordinal, seed) if n else None,
        alpha=alpha_of(units.old, units.new, ordinal),
        alpha_level="interval" if ordinal else "nominal",
        left_out=dict(units.left_out),
    )


def kappa_of(old: list[str], new: list[str], ordinal: bool, seed: int) -> Kappa:
    """Weighted (quadratic) kappa for ratings, Cohen's kappa for labels and choices."""
    if ordinal:
        order = sorted(set(old) | set(new), key=float)
        estimate = cohen_kappa(new, old, categories=order, weights="quadratic", seed=seed)
    else:
        estimate = cohen_kappa(new, old, seed=seed)
    return Kappa(
        value=estimate.value, ci95=estimate.ci95, method=estimate.method, note=estimate.note
    )


def alpha_of(old: list[str], new: list[str], ordinal: bool) -> float | None:
    if ordinal:
        return krippendorff_alpha(
            [[float(a), float(b)] for a, b in zip(old, new, strict=True)], "interval"
        )
    return krippendorff_alpha([[a, b] for a, b in zip(old, new, strict=True)], "nominal")


def score_change(scope: str, rows: Sequence[PairedRow], value: RowValue, seed: int) -> ScoreChange:
    """The mean change NEW - OLD with its paired bootstrap interval (score_a is the new side's)."""
    new = [r.score_a for r in rows if r.score_a is not None and r.score_b is not None]
    old = [r.score_b for r in rows if r.score_a is not None and r.score_b is not None]
    stats = compare_paired(new, old, seed=seed, width=value.width or 1.0)
    return ScoreChange(
        scope=scope,
        rows=stats.n,
        mean_old=stats.mean_b,
        mean_new=stats.mean_a,
        change=stats.mean_diff,
        ci95=stats.ci95,
        ci_method=stats.ci_method,
    )


def tag_changes(rows: Sequence[PairedRow], value: RowValue, seed: int) -> list[ScoreChange]:
    """Per tag (Gecko's), over the rows that scored the tag on both sides."""
    tags = list(dict.fromkeys(t for r in rows for t in r.tags_a if t in r.tags_b))
    out = []
    for tag in tags:
        tagged = [
            PairedRow(r.key, r.row_a, r.row_b, "paired", r.tags_a[tag], r.tags_b[tag])
            for r in rows
            if tag in r.tags_a and tag in r.tags_b
        ]
        out.append(score_change(f"tag {tag}", tagged, value, seed))
    return out


def group_changes(
    rows: Sequence[PairedRow], columns: Sequence[str], value: RowValue, seed: int
) -> list[ScoreChange]:
    """Per value of each --group-by column (rows without one: "(no value)")."""
    out = []
    for column in dict.fromkeys(columns):
        groups: dict[str, list[PairedRow]] = defaultdict(list)
        for r in rows:
            found = r.row.extra.get(column)
            groups["(no value)" if found in (None, "") else str(found)].append(r)
        out += [
            score_change(f"group {column}={g}", members, value, seed)
            for g, members in groups.items()
        ]
    return out


def changed_rows(
    units: UnitPairs, scored: Mapping[RowKey, PairedRow], top: int
) -> list[ChangedRow]:
    """The rows whose verdicts changed most (most changed units, then the largest score
    change), at most ``top``."""
    scores = {k: (r.score_b, r.score_a) for k, r in scored.items()}
    out = []
    for pair, changes, both in units.per_row:
        if not changes:
            continue
        row = pair.new if pair.new is not None else pair.old
        assert row is not None
        old_score, new_score = scores.get(pair.key, (None, None))
        out.append(
            ChangedRow(
                id=row.id,
                line=row.line,
                candidate=row.candidate,
                units=both,
                changed=len(changes),
                score_old=old_score,
                score_new=new_score,
                changes=[ChangedUnit(unit=u, old=a, new=b) for u, a, b in changes],
            )
        )
    gap = {id(r): abs((r.score_new or 0.0) - (r.score_old or 0.0)) for r in out}
    out.sort(key=lambda r: (-r.changed, -gap[id(r)], r.line))
    return out[:top]


def _samples(rows: Sequence[object]) -> list[list[str]]:
    out = []
    for row in rows:
        for r in getattr(row, "repeats", []):
            assert isinstance(r, Repeats)
            out.append([s.answer for s in r.samples if s.answer is not None])
    return out


def noise_of(
    old: JobSide, new: JobSide, retest: JobSide | None, value: RowValue, seed: int
) -> Noise:
    """The old judge's own noise: from a retest when one is given, else from the repeats of
    either job (the old job's first), else unknown."""
    if retest is not None:
        pairs = [p for p in pair_rows(old, retest) if p.old is not None and p.new is not None]
        units = unit_pairs(pairs, old, retest)
        figures = unit_drift(units, seed)
        floor = noise_floor(old.rows)
        again = [pair_values((p.key[0], p.key[2]), p.new, p.old, value) for p in pairs]
        change = score_change("retest", [r for r in again if r.status == "paired"], value, seed)
        return Noise(
            source="retest",
            job_id=retest.job_id,
            units=figures.units,
            share=figures.share,
            ci95=figures.ci95,
            kappa=None if figures.kappa is None else figures.kappa.value,
            alpha=figures.alpha,
            mean_margin=_margin(floor, value),
            mean_change=change.change,
            mean_change_ci95=change.ci95,
            note=None if figures.units else "the retest answered no unit the old job answered",
        )
    for side in (old, new):
        share = retest_disagreement(_samples(side.rows))
        if share is None:
            continue
        floor = noise_floor(side.rows)
        return Noise(
            source="repeats",
            job_id=side.job_id,
            units=share.n,
            share=share.value,
            ci95=share.ci95,
            alpha=None if floor is None else floor.alpha,
            mean_margin=_margin(floor, value),
            note=REPEATS_NOTE,
        )
    return Noise(
        note="neither job has repeats: pass --retest N (the old judge on N rows again) or "
        "--retest-job JOB (such a job) to measure the judge's own noise"
    )


def _margin(floor: object, value: RowValue) -> float | None:
    margin = getattr(floor, "mean_score_noise_margin", None)
    return None if margin is None else margin * value.width


def _pct(bounds: tuple[float, float] | None) -> str:
    return "n/a" if bounds is None else f"[{bounds[0]:.1%}, {bounds[1]:.1%}]"


def decide(units: UnitDrift, noise: Noise) -> Verdict:
    """The one line, by DRIFT_RULE."""
    if units.share is None or units.ci95 is None:
        return Verdict(
            drift=None,
            line="no unit was answered by both jobs: nothing to compare",
            rule=DRIFT_RULE,
        )
    flips = f"{units.changed} of {units.units} verdicts changed ({units.share:.1%}, 95% CI {_pct(units.ci95)})"
    if noise.share is None or noise.ci95 is None:
        return Verdict(
            drift=None,
            line=f"noise floor unknown: {flips}; {noise.note or ''}".rstrip("; "),
            rule=DRIFT_RULE,
        )
    where = "a retest" if noise.source == "retest" else "the repeats"
    floor = (
        f"the judge's own flip share is {noise.share:.1%} (95% CI {_pct(noise.ci95)}, from "
        f"{where} of {noise.job_id}, {noise.units} units)"
    )
    gap = share_difference(
        Share(units.share, units.ci95, units.units), Share(noise.share, noise.ci95, noise.units)
    )
    assert gap is not None
    beyond = (
        f"the difference {units.share - noise.share:+.1%}, 95% CI [{gap[0]:+.1%}, {gap[1]:+.1%}]"
    )
    if gap[0] > 0:
        line = f"drift beyond noise: {flips}; {floor}; {beyond}"
        return Verdict(drift=True, line=line, rule=DRIFT_RULE, difference_ci95=gap)
    line = f"within the judge's own noise: {flips}; {floor}; {beyond}"
    return Verdict(drift=False, line=line, rule=DRIFT_RULE, difference_ci95=gap)


def _primary(level: object) -> tuple[str, float | None, tuple[float, float] | None, int] | None:
    """A level's headline statistic: kappa for labels, else accuracy, else Spearman."""
    overall = getattr(level, "overall", None)
    for name in ("kappa", "accuracy", "spearman", "pairwise_accuracy"):
        stat = getattr(overall, name, None)
        if stat is not None and stat.value is not None:
            return name, stat.value, stat.ci95, stat.n
    return None


def human_verdict(old: object | None, new: object | None) -> HumanVerdict | None:
    """Which judge agrees better with the people, level by level, where both jobs have labels."""
    if not isinstance(old, HumanAgreement) or not isinstance(new, HumanAgreement):
        return None
    by_level = {lv.level: lv for lv in new.levels}
    sides = []
    for level in old.levels:
        other = by_level.get(level.level)
        a, b = _primary(level), None if other is None else _primary(other)
        if a is None or b is None or a[0] != b[0]:
            continue
        sides.append(
            HumanSide(
                level=level.level,
                statistic=a[0],
                old=a[1],
                new=b[1],
                old_ci95=a[2],
                new_ci95=b[2],
                labels=min(a[3], b[3]),
            )
        )
    if not sides:
        return None
    first = sides[0]
    assert first.old is not None and first.new is not None
    if first.old == first.new:
        which = "both judges agree with the people alike"
    else:
        which = (
            "the new judge" if first.new > first.old else "the old judge"
        ) + " agrees better with the people"
    overlap = (
        first.old_ci95 is not None
        and first.new_ci95 is not None
        and first.old_ci95[0] <= first.new_ci95[1]
        and first.new_ci95[0] <= first.old_ci95[1]
    )
    line = (
        f"{which}: {first.level} {first.statistic} {first.new:.3f} (new) vs {first.old:.3f} "
        f"(old) over {first.labels} labels" + ("; their intervals overlap" if overlap else "")
    )
    return HumanVerdict(levels=sides, line=line)


__all__ = ["DRIFT_RULE", "JobSide", "RowPair", "drift_report"]
