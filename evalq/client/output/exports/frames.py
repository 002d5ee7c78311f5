"""Every pandas DataFrame the Python API returns: one job's results (Job.results(),
evalq.history: the table the CSV export writes, with Python values in its cells), a
comparison's tables (evalq.compare) and a calibration's (evalq.calibrate)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalq.client.output.exports.result_columns import extra_names, metric_table
from evalq.client.output.judged_texts import judged_columns
from evalq.comparisons.comparison import Comparison, comparison_dict, row_dict
from evalq.comparisons.leaderboard import Standing, group_leaderboards, leaderboard
from evalq.core.human.calibration import Calibration, calibration_dict, estimate_dict
from evalq.core.models import RowResult

if TYPE_CHECKING:
    import pandas as pd


def results_frame(
    rows: list[RowResult], texts: Sequence[Mapping[str, str]] | None = None
) -> pd.DataFrame:
    """One row per result; a multi-candidate job's frame has a `candidate` column after the
    id (one row per dataset row and candidate). Each metric's own columns (rating,
    explanation, winner, labels...: evalq.client.result_columns), then what the judge was
    shown (`texts`, each row's: evalq.client.judged_texts) under the dataset's column names,
    come before `questions` and `details`, and the dataset's extra columns keep their names
    (`extra:NAME` on a clash)."""
    import pandas as pd

    cells = any(r.candidate is not None for r in rows)
    names, metric = metric_table(rows)
    shown = list(texts) if texts is not None else [{} for _ in rows]
    records = []
    for r, own in zip(rows, metric, strict=True):
        record: dict[str, Any] = {"id": r.id}
        if cells:
            record["candidate"] = r.candidate
        record |= {
            "line": r.line,
            "prompt": r.prompt,
            "status": r.status,
            "score": r.score,
            "coverage": r.coverage,
            "reason": r.reason,
            "error": r.error,
            "simulated": r.simulated,
        }
        record.update({f"tag:{t}": v for t, v in r.tag_scores.items()})
        record.update({name: own.get(name) for name in names})
        records.append(record)
    taken = {key for record in records for key in record} | {"questions", "details"}
    judged = judged_columns(shown, metric, sorted(taken))
    for r, record, seen in zip(rows, records, shown, strict=True):
        record.update({header: seen.get(name) for name, header in judged.items()})
        record["questions"] = [q.model_dump() for q in r.questions]
        record["details"] = r.details
    taken |= set(judged.values())
    renamed = extra_names(rows, sorted(taken))
    for r, record in zip(rows, records, strict=True):
        record.update({renamed[k]: v for k, v in r.extra.items()})
    return pd.DataFrame.from_records(records)


@dataclass(frozen=True)
class CompareResult:
    """What `evalq.compare` returns: the comparison and its tables as DataFrames."""

    comparison: Comparison
    overall: pd.DataFrame
    per_tag: pd.DataFrame
    per_row: pd.DataFrame
    leaderboard: pd.DataFrame
    # One row per pair, --group-by column and value (empty without group_by).
    per_group: pd.DataFrame | None = None
    # The leaderboard per --group-by column and value: a row per candidate of each (empty
    # without group_by).
    leaderboard_per_group: pd.DataFrame | None = None
    # Where the sides were not judged alike (judge models, versions, templates, thinking...):
    # one dict per difference, with its `line` as the terminal says it. Empty: judged alike.
    setup_differences: list[dict[str, Any]] = field(default_factory=list)

    @property
    def mixed(self) -> bool:
        """The sides differ in judge setup: their difference is not only the candidates'."""
        return bool(self.setup_differences)

    def to_dict(self) -> dict[str, Any]:
        return comparison_dict(self.comparison)


def _stats_record(stats: Any) -> dict[str, Any]:
    low, high = stats.ci95 if stats.ci95 is not None else (None, None)
    return {
        "rows": stats.n,
        "mean_a": stats.mean_a,
        "mean_b": stats.mean_b,
        "mean_diff": stats.mean_diff,
        "ci_low": low,
        "ci_high": high,
        "p_permutation": stats.p_permutation,
        "p_method": stats.p_method,
        "p_sign": stats.p_sign,
        "wins": stats.wins,
        "ties": stats.ties,
        "losses": stats.losses,
        "ci_note": stats.ci_note,
    }


def _standing_record(s: Standing, value: str) -> dict[str, Any]:
    """A candidate's line of the leaderboard DataFrames."""
    return {
        "rank": s.rank,
        "candidate": s.label,
        "value": value,
        "mean": s.mean,
        "ci_low": s.ci95[0] if s.ci95 else None,
        "ci_high": s.ci95[1] if s.ci95 else None,
        "rows": s.rows,
        **{f"tag:{t}": m for t, (m, _) in s.tags.items()},
        "significantly_better_than": ",".join(s.beats),
    }


def comparison_frames(comparison: Comparison) -> CompareResult:
    """The comparison's tables as DataFrames: per pair, tag, row and group, and the leaderboards."""
    import pandas as pd

    overall, per_tag, per_row, per_group = [], [], [], []
    value = comparison.value.label
    for pair in comparison.pairs:
        overall.append(
            {
                "a": pair.a,
                "b": pair.b,
                "value": value,
                **_stats_record(pair.overall),
                "p_holm": pair.p_holm,
                "significant": pair.significant(comparison.alpha),
                **{f"rows_{k}": v for k, v in pair.counts.items()},
            }
        )
        for tag, diff in pair.tags.items():
            per_tag.append(
                {"a": pair.a, "b": pair.b, "tag": tag, **_stats_record(diff.stats)}
                | {"p_holm_tags": diff.p_holm}
            )
        for row in pair.rows:
            record = row_dict(row)
            record.pop("key")
            per_row.append({"a": pair.a, "b": pair.b, **record, "value": value})
        for group in pair.groups:
            per_group.append(
                {"a": pair.a, "b": pair.b, "column": group.column, "group": group.value}
                | {"value": value, **_stats_record(group.stats), "p_holm_groups": group.p_holm}
            )
    costs = {s.label: s for s in comparison.sides}
    standings = [
        _standing_record(s, value)
        | {
            "cost_usd": costs[s.label].cost_usd,
            "cost_is_estimate": costs[s.label].simulated,
            "cost_shared_with": ",".join(costs[s.label].cost_shared_with),
        }
        for s in leaderboard(comparison)
    ]
    board_columns = ["column", "group", "rank", "candidate", "value", "mean", "ci_low", "ci_high"]
    by_group = [
        {"column": g.column, "group": g.value} | _standing_record(s, value)
        for g in group_leaderboards(comparison)
        for s in g.standings
    ]
    return CompareResult(
        comparison,
        pd.DataFrame.from_records(overall),
        pd.DataFrame.from_records(per_tag),
        pd.DataFrame.from_records(per_row),
        pd.DataFrame.from_records(standings),
        pd.DataFrame.from_records(
            per_group,
            columns=None if per_group else ["a", "b", "column", "group", "value", "rows"],
        ),
        pd.DataFrame.from_records(by_group, columns=None if by_group else board_columns),
        [d.as_dict() for d in comparison.setup_differences],
    )


@dataclass(frozen=True)
class CalibrateResult:
    """What `evalq.calibrate` returns: the calibration and its tables as DataFrames."""

    calibration: Calibration
    setups: pd.DataFrame
    differences: pd.DataFrame
    left_out: pd.DataFrame  # one row per setup, reason and left-out row id
    most_agreeing: str | None
    best_per_cost: str | None
    best_per_cost_rule: str
    jobs: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return calibration_dict(self.calibration)


def _flat(prefix: str, estimate: Any) -> dict[str, Any]:
    d = estimate_dict(estimate)
    low, high = d["ci95"] or (None, None)
    return {prefix: d["value"], f"{prefix}_ci_low": low, f"{prefix}_ci_high": high}


def calibration_frames(result: Calibration, jobs: Mapping[str, str]) -> CalibrateResult:
    """The calibration's tables as DataFrames: per setup, per two setups, per row left out."""
    import pandas as pd

    setups = pd.DataFrame.from_records(
        [
            {"setup": s.name, "job_id": s.job_id}
            | _flat("spearman", s.spearman)
            | _flat("kendall", s.kendall)
            | _flat("pairwise_accuracy", s.pairwise)
            | {"pairs": s.pairwise.n, "rows": s.rows, "rows_used": s.used}
            | {"rows_left_out": sum(s.left_out.values())}
            | {"cost_per_row_usd": s.cost_per_row_usd, "cost_kind": s.cost_kind}
            for s in result.setups
        ]
    )
    differences = pd.DataFrame.from_records(
        [
            {"a": d.a, "b": d.b, "rows": d.difference.n}
            | _flat("spearman_difference", d.difference)
            | {"p_value": d.p_value, "p_holm": d.p_holm, "significant": d.significant}
            for d in result.differences
        ],
        columns=None if result.differences else ["a", "b", "rows"],
    )
    left_out = pd.DataFrame.from_records(
        [
            {"setup": s.name, "reason": why, "id": row_id}
            for s in result.setups
            for why, ids in s.left_out_ids.items()
            for row_id in ids
        ],
        columns=["setup", "reason", "id"],
    )
    return CalibrateResult(
        result,
        setups,
        differences,
        left_out,
        result.most_agreeing,
        result.best_per_cost,
        result.best_per_cost_why,
        dict(jobs),
    )
