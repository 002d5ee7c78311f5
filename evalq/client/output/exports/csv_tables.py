"""The CSV tables evalq writes: one job's results (`evalq results --format csv`) and a
leaderboard (`evalq leaderboard --csv`), spreadsheet-safe (every CSV evalq writes goes
through evalq.client.output.exports.csv_safe)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping, Sequence

from evalq.client.output.exports.csv_safe import safe_writer
from evalq.client.output.exports.result_columns import extra_names, metric_table
from evalq.client.output.judged_texts import judged_columns
from evalq.comparisons.leaderboard import GroupStandings, Standing
from evalq.core.models import RowResult


def results_csv(rows: Iterable[RowResult], texts: Sequence[Mapping[str, str]] | None = None) -> str:
    """The results as one table: evalq's columns, each metric's own (rating, explanation,
    winner, labels...: evalq.client.output.exports.result_columns), what the judge was shown
    (`texts`, each row's: evalq.client.output.judged_texts) under the dataset's column names,
    then every extra column of the dataset under its own name (`extra:NAME` where it clashes with one of
    ours)."""
    rows = list(rows)
    shown = list(texts) if texts is not None else [{} for _ in rows]
    tags = sorted({t for r in rows for t in r.tag_scores})
    # Multi-candidate jobs: one line per row and candidate, the candidate next to the id.
    cells = any(r.candidate is not None for r in rows)
    names, metric = metric_table(rows)
    header = [
        "id",
        *(["candidate"] if cells else []),
        "line",
        "prompt",
        "status",
        "score",
        "coverage",
        "reason",
        "error",
        "simulated",
        *[f"tag:{t}" for t in tags],
        *names,
    ]
    judged = judged_columns(shown, metric, [*header, "questions", "details"])
    header += [*judged.values(), "questions", "details"]
    extras = extra_names(rows, header)
    out = io.StringIO()
    writer = safe_writer(out)
    writer.writerow([*header, *extras.values()])
    for r, own, seen in zip(rows, metric, shown, strict=True):
        writer.writerow(
            [
                r.id,
                *([r.candidate or ""] if cells else []),
                r.line,
                r.prompt,
                r.status,
                "" if r.score is None else f"{r.score:.6g}",
                "" if r.coverage is None else f"{r.coverage:.6g}",
                r.reason or "",
                r.error or "",
                r.simulated,
                *["" if t not in r.tag_scores else f"{r.tag_scores[t]:.6g}" for t in tags],
                *[_csv_cell(own.get(name)) for name in names],
                *[_csv_cell(seen.get(name)) for name in judged],
                json.dumps([q.model_dump() for q in r.questions]),
                json.dumps(r.details, default=str),
                *[_csv_cell(r.extra.get(name)) for name in extras],
            ]
        )
    return out.getvalue()


def _csv_cell(value: object) -> object:
    """A cell as a spreadsheet reads it: empty for no value (never 0), floats to 6 digits,
    lists and mappings as JSON, the rest as it is."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=str)
    return value


def leaderboard_csv(standings: list[Standing], groups: Sequence[GroupStandings] = ()) -> str:
    """One line per candidate; with --group-by, then one per candidate of each group, the
    first two columns naming the group (empty on the overall lines)."""
    every = [*standings, *(s for g in groups for s in g.standings)]
    tags = sorted({t for s in every for t in s.tags})
    buf = io.StringIO()
    writer = safe_writer(buf, lineterminator="\n")
    grouped = [("", "", s) for s in standings] + [
        (g.column, g.value, s) for g in groups for s in g.standings
    ]
    writer.writerow(
        [
            *(("group_column", "group_value") if groups else ()),
            "rank",
            "candidate",
            "mean",
            "ci_low",
            "ci_high",
            "ci_method",
            "rows",
            *(f"tag:{t}" for t in tags),
            *(f"rows:{t}" for t in tags),
            "significantly_better_than",
        ]
    )
    for column, value, s in grouped:
        writer.writerow(
            [
                *((column, value) if groups else ()),
                s.rank,
                s.label,
                "" if s.mean is None else f"{s.mean:.6f}",
                "" if s.ci95 is None else f"{s.ci95[0]:.6f}",
                "" if s.ci95 is None else f"{s.ci95[1]:.6f}",
                s.ci_method or "",
                s.rows,
                *(f"{s.tags[t][0]:.6f}" if t in s.tags else "" for t in tags),
                *(s.tags[t][1] if t in s.tags else 0 for t in tags),
                ";".join(s.beats),
            ]
        )
    return buf.getvalue()
