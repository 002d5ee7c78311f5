"""The HTML comparison report: per pair, the overall difference, per-tag bars with the paired
interval of each difference, and the rows that differ most with both sides' media and answers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from markupsafe import Markup

from evalq.client.output.comparison_text import counts_line
from evalq.client.output.formats import figure_text, money, p_text
from evalq.client.output.html.borderline import repeat_lines
from evalq.client.output.html.page import render_page
from evalq.client.output.html.report import (
    LABEL_COLORS,
    ROW_CSS,
    ROW_MACROS,
    label_width,
    thumbnail,
)
from evalq.client.output.html.row_views import input_for, row_view, shows_media
from evalq.comparisons.comparison import Comparison, PairComparison
from evalq.comparisons.paired_rows import PairedRow
from evalq.comparisons.question_diffs import question_differences
from evalq.core.data_roots import DataRoots
from evalq.core.models import JobConfig, JobSummary, MediaRef, RowInput
from evalq.stats.paired import PairedDifference

COLOR_A = "#4a7bd0"
COLOR_B = "#e08a2c"


def _text(x: float, y: float, text: str, anchor: str = "start", size: int = 12) -> Markup:
    return Markup('<text x="{:.1f}" y="{:.1f}" text-anchor="{}" font-size="{}">{}</text>').format(
        x, y, anchor, size, text
    )


def _line(x1: float, y1: float, x2: float, y2: float, color: str = "#222") -> Markup:
    return Markup(
        '<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}"></line>'
    ).format(x1, y1, x2, y2, color)


def _rect(x: float, y: float, w: float, h: float, fill: str) -> Markup:
    return Markup(
        '<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"></rect>'
    ).format(x, y, max(1.0, w), h, fill)


def difference_chart(pair: PairComparison) -> Markup:
    """One line per figure (overall, then each tag): A's and B's means as two bars on the
    compared value's scale (a share on [0, 1], a rating on [1, 5]), then the paired difference
    A - B as a dot with its 95% interval on [-span, +span] (span: high - low)."""
    value = pair.value
    low, span = value.low, value.width or 1.0
    lines: list[tuple[str, PairedDifference]] = [("overall", pair.overall)]
    lines += [(tag, d.stats) for tag, d in pair.tags.items()]
    names = [f"{name} ({stats.n} rows)" for name, stats in lines]
    label_w = max(120, round(label_width(names, 12)))
    bar_w, gap, diff_w, row_h = 220, 30, 260, 34
    width = label_w + bar_w + gap + diff_w + 170
    top = 38  # two header lines: long side names and scales would collide on one
    height = row_h * len(lines) + top + 10
    zero = label_w + bar_w + gap + diff_w / 2
    parts: list[Markup] = [
        _text(label_w, 12, f"mean per row: {value.label}"),
        _text(zero, 28, f"difference {pair.a} - {pair.b} (±{span:g}), 95% CI", "middle"),
        _line(zero, top - 4, zero, height - 4, "#999"),
    ]
    for i, (name, stats) in enumerate(lines):
        y = top + i * row_h
        parts.append(_text(label_w - 6, y + 17, f"{name} ({stats.n} rows)", "end"))
        for j, (mean, color) in enumerate(((stats.mean_a, COLOR_A), (stats.mean_b, COLOR_B))):
            if mean is None:
                continue
            share = min(1.0, max(0.0, (mean - low) / span))
            parts.append(_rect(label_w, y + 3 + j * 13, share * bar_w, 11, color))
            parts.append(
                _text(label_w + share * bar_w + 4, y + 12 + j * 13, f"{mean:.3f}", size=10)
            )
        parts.append(
            Markup(
                '<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#ddd"></rect>'
            ).format(label_w, y + 2, bar_w, 27)
        )
        if stats.mean_diff is None:
            continue
        mid = y + 15
        scale = diff_w / 2 / span
        if stats.ci95 is not None:
            low, high = zero + stats.ci95[0] * scale, zero + stats.ci95[1] * scale
            parts += [
                _line(low, mid, high, mid),
                _line(low, mid - 5, low, mid + 5),
                _line(high, mid - 5, high, mid + 5),
            ]
        x = zero + stats.mean_diff * scale
        parts.append(
            Markup('<circle cx="{:.1f}" cy="{:.1f}" r="4" fill="#222"></circle>').format(x, mid)
        )
        ci = "" if stats.ci95 is None else f" [{stats.ci95[0]:+.3f}, {stats.ci95[1]:+.3f}]"
        parts.append(_text(zero + diff_w / 2 + 8, mid + 4, f"{stats.mean_diff:+.3f}{ci}", size=11))
    body = Markup("").join(parts)
    return Markup(
        '<svg class="chart" width="{0}" height="{1}" viewBox="0 0 {0} {1}"'
        ' style="max-width: 100%; height: auto" role="img" aria-label="per-tag comparison">{2}</svg>'
    ).format(width, height, body)


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>evalq comparison</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1150px; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 30px; } h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 8px 0; } td, th { border: 1px solid #ccc; padding: 4px 8px; vertical-align: top; }
th { background: #f2f2f2; text-align: left; }
.banner { background: #fff3c4; border: 1px solid #e0c050; padding: 8px 12px; font-weight: bold; }
.key-a { color: {{ color_a }}; font-weight: bold; } .key-b { color: {{ color_b }}; font-weight: bold; }
.sig { color: #1a7f37; font-weight: bold; } .nsig { color: #777; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; } .side { min-width: 0; border-top: 4px solid #ddd; padding-top: 6px; }
.side-list td:not(:last-child) { white-space: nowrap; }
.side.a { border-top-color: {{ color_a }}; } .side.b { border-top-color: {{ color_b }}; }
{{ row_css }}
</style></head><body>
<h1>evalq comparison: {% for s in c.sides %}{{ s.label }}{% if not loop.last %} · {% endif %}{% endfor %}</h1>
{% for d in c.setup_differences %}<p class="banner mixed">{{ d.line() }}</p>{% endfor %}
{% if simulated %}<p class="banner">SIMULATED JUDGE: these verdicts come from evalq's fake Gemini server, not a real model.</p>{% endif %}
<table class="side-list"><tr><th>side</th><th>job</th><th>candidate</th><th>metric</th><th>rows</th><th>cost</th></tr>
{% for s in c.sides %}<tr><td>{{ s.label }}</td><td>{{ s.job_id }}</td><td>{{ s.candidate or "" }}</td><td>{{ s.metric }}</td><td>{{ s.rows|length }}</td><td>{{ costs.get(s.label, "not known") }}</td></tr>{% endfor %}</table>
<p class="note">Rows aligned by {{ c.by }}. Paired bootstrap (BCa, {{ c.resamples }} resamples, seed {{ c.seed }}) for the intervals; paired permutation test (exact up to 2^20 sign patterns, else {{ c.permutation_resamples }} draws, seed {{ c.seed }}) for p; sign test on wins and losses. Rows or questions unscored on either side are left out and counted, never scored 0.{% if c.pairs|length > 1 %} {{ c.holm_note }}: significance uses the Holm-adjusted p.{% endif %}</p>
{% for note in c.notes %}<p class="note">note: {{ note }}</p>{% endfor %}
{% if has_sentences %}{{ label_key(colors) }}{% endif %}
{% for p in pairs %}
<h2><span class="key-a">{{ p.pair.a }}</span> vs <span class="key-b">{{ p.pair.b }}</span></h2>
<p>Compared on {{ p.pair.value.label }}. Mean difference {{ signed(p.pair.overall.mean_diff) }}{% if p.pair.overall.ci95 %}, 95% CI [{{ signed(p.pair.overall.ci95[0]) }}, {{ signed(p.pair.overall.ci95[1]) }}]{% endif %};
{% if p.pair.overall.p_permutation is not none %}p = {{ pv(p.pair.overall.p_permutation) }} ({{ p.pair.overall.p_method }} permutation){% else %}no p-value (no paired row){% endif %}{% if c.pairs|length > 1 %}, Holm {{ pv(p.pair.p_holm) }}{% endif %}; sign test p = {{ pv(p.pair.overall.p_sign) }};
wins/ties/losses {{ p.pair.overall.wins }}/{{ p.pair.overall.ties }}/{{ p.pair.overall.losses }}:
{% if p.pair.significant(c.alpha) %}<span class="sig">significant at {{ c.alpha }}</span>{% else %}<span class="nsig">not significant at {{ c.alpha }}</span>{% endif %}</p>
<p class="note">{{ p.counts }}</p>
{% for words in p.pair.within_noise %}<p class="note">{{ words }}</p>{% endfor %}
<p><span class="key-a">■ {{ p.pair.a }}</span> &nbsp; <span class="key-b">■ {{ p.pair.b }}</span></p>
{{ p.chart }}
{% if p.pair.tags %}<table><tr><th>tag</th><th>rows</th><th>{{ p.pair.a }}</th><th>{{ p.pair.b }}</th><th>diff</th><th>95% CI</th><th>p perm</th><th>p Holm (tags)</th><th>W/T/L</th></tr>
{% for tag, d in p.pair.tags.items() %}<tr><td>{{ tag }}</td><td>{{ d.stats.n }}</td><td>{{ num(d.stats.mean_a) }}</td><td>{{ num(d.stats.mean_b) }}</td><td>{{ signed(d.stats.mean_diff) }}</td><td>{% if d.stats.ci95 %}[{{ signed(d.stats.ci95[0]) }}, {{ signed(d.stats.ci95[1]) }}]{% else %}n/a{% endif %}</td><td>{{ pv(d.stats.p_permutation) }}</td><td>{{ pv(d.p_holm) }}</td><td>{{ d.stats.wins }}/{{ d.stats.ties }}/{{ d.stats.losses }}</td></tr>
{% endfor %}</table>{% endif %}
{% if p.pair.groups %}<h3>Per group</h3><table class="groups"><tr><th>group</th><th>rows</th><th>{{ p.pair.a }}</th><th>{{ p.pair.b }}</th><th>diff</th><th>95% CI</th><th>p perm</th><th>p Holm (groups)</th><th>W/T/L</th></tr>
{% for g in p.pair.groups %}<tr><td>{{ g.column }}={{ g.value }}</td><td>{{ g.stats.n }}</td><td>{{ num(g.stats.mean_a) }}</td><td>{{ num(g.stats.mean_b) }}</td><td>{{ signed(g.stats.mean_diff) }}</td><td>{% if g.stats.ci95 %}[{{ signed(g.stats.ci95[0]) }}, {{ signed(g.stats.ci95[1]) }}]{% else %}n/a{% endif %}</td><td>{{ pv(g.stats.p_permutation) }}</td><td>{{ pv(g.p_holm) }}</td><td>{{ g.stats.wins }}/{{ g.stats.ties }}/{{ g.stats.losses }}</td></tr>
{% endfor %}</table>{% endif %}
{% if p.differ %}<h3>Questions met by one side only</h3><table class="differ"><tr><th>question</th><th>tag</th><th>{{ p.pair.a }} only</th><th>{{ p.pair.b }} only</th><th>both scored</th></tr>
{% for d in p.differ %}<tr><td>{{ d.question }}</td><td>{{ d.tag }}</td><td>{{ d.a_only }}</td><td>{{ d.b_only }}</td><td>{{ d.both_scored }}</td></tr>
{% endfor %}</table>{% endif %}
<h3>{{ p.rows_title }}</h3>
{% for r in p.rows %}<div class="card">
<div><b>{{ r.row.row.id }}</b> · {{ r.row.status }} · <span class="key-a">{{ num(r.row.score_a) }}</span> vs <span class="key-b">{{ num(r.row.score_b) }}</span>{% if r.row.diff is not none %} ({{ signed(r.row.diff) }}){% endif %}{% if r.row.questions_left_out %} · {{ r.row.questions_left_out }} questions left out{% endif %}</div>
<div class="sides">
{% for side in r.sides %}<div class="side {{ side.key }}"><div class="{{ 'key-' + side.key }}">{{ side.label }}</div>
{% if side.thumb %}<div>{{ side.thumb }}</div>{% endif %}
{% if side.view %}{{ row_body(side.view, colors) }}{{ repeat_block(side.repeats) }}{% else %}<p class="note">no row on this side</p>{% endif %}</div>
{% endfor %}</div>
</div>{% else %}<p class="note">No paired row to show.</p>{% endfor %}
{% endfor %}
</body></html>
"""

TEMPLATE = ROW_MACROS + PAGE


# What the page formats and colours with, the same on every render.
_HELPERS = {
    "fmt": figure_text,
    "pretty": str,
    "num": figure_text,
    "signed": partial(figure_text, signed=True),
    "pv": p_text,
    "row_css": Markup(ROW_CSS),
    "colors": LABEL_COLORS,
    "color_a": COLOR_A,
    "color_b": COLOR_B,
}


MediaOf = Callable[[str, PairedRow, str], MediaRef | None]


def media_lookup(
    inputs: Mapping[str, Mapping[str, RowInput]], candidates: Mapping[str, str | None]
) -> MediaOf:
    """A side's media for a row: its stored input (by the side's row id), the candidate's
    column for multi-candidate jobs, else the row's first media field."""

    def find(label: str, row: PairedRow, which: str) -> MediaRef | None:
        result = row.row_a if which == "a" else row.row_b
        if result is None:
            return None
        row_input = inputs.get(label, {}).get(result.id)
        if row_input is None or not row_input.media:
            return None
        candidate = candidates.get(label)
        if candidate is not None and candidate in row_input.media:
            return row_input.media[candidate]
        return next(iter(row_input.media.values()))

    return find


def render_comparison(
    comparison: Comparison,
    *,
    media_of: MediaOf | None = None,
    data_roots: Mapping[str, list[str]] | None = None,
    top: int = 10,
    inputs: Mapping[str, Mapping[Any, RowInput]] | None = None,
    summaries: Mapping[str, JobSummary] | None = None,
    configs: Mapping[str, JobConfig] | None = None,
) -> str:
    """The comparison page. `inputs` (per side label, the stored rows) give each side's row
    its texts, named by the dataset's columns as `configs` (per side label, its job's) say;
    `summaries` (per side label) its cost."""
    roots = {
        label: DataRoots.of(list(folders)) if folders else None
        for label, folders in (data_roots or {}).items()
    }
    metrics = {s.label: s.metric for s in comparison.sides}

    def side(label: str, row: PairedRow, which: str) -> dict[str, Any]:
        result = row.row_a if which == "a" else row.row_b
        metric = metrics.get(label, "")
        thumb = Markup("")
        if media_of is not None and shows_media(metric):
            thumb = thumbnail(media_of(label, row, which), roots.get(label))
        side_inputs = (inputs or {}).get(label, {})
        view = None
        if result is not None:
            view = row_view(
                metric, result, input_for(side_inputs, result), (configs or {}).get(label)
            )
        repeats = repeat_lines(result) if result is not None else ()
        return {"key": which, "label": label, "thumb": thumb, "view": view, "repeats": repeats}

    pairs: list[dict[str, Any]] = []
    for pair in comparison.pairs:
        shown = pair.top_rows(top)
        title = "Rows that differ most"
        if not shown:
            shown = pair.rows[:top]
            title = "No paired row differs: the first rows, as each side scored them"
        rows = [{"row": r, "sides": [side(pair.a, r, "a"), side(pair.b, r, "b")]} for r in shown]
        pairs.append(
            {
                "pair": pair,
                "chart": difference_chart(pair),
                "rows": rows,
                "rows_title": title,
                "counts": counts_line(pair),
                "differ": question_differences(pair.paired, top),
            }
        )
    return render_page(
        TEMPLATE,
        _HELPERS,
        c=comparison,
        pairs=pairs,
        simulated=any(s.simulated for s in comparison.sides),
        costs=_costs(comparison, summaries or {}),
        has_sentences=any(
            s["view"] is not None and s["view"].sentence_blocks
            for p in pairs
            for r in p["rows"]
            for s in r["sides"]
        ),
    )


def _costs(comparison: Comparison, summaries: Mapping[str, JobSummary]) -> dict[str, str]:
    """Each side's cost where its job's is known; a candidate of a multi-candidate job shares
    its job's cost, and says so."""
    out = {}
    for s in comparison.sides:
        summary = summaries.get(s.label)
        if summary is None:  # the side's own record of its cost, when it was read
            if s.cost_usd is not None:
                out[s.label] = money(s.cost_usd) + (" (whole job)" if s.cost_shared_with else "")
            elif s.cost_note:
                out[s.label] = f"unknown ({s.cost_note})"
            continue
        if summary.cost_usd is None:
            out[s.label] = "unknown" + (f" ({summary.cost_note})" if summary.cost_note else "")
        else:
            out[s.label] = money(summary.cost_usd) + (
                " (whole job, all candidates)" if s.candidate else ""
            )
    return out
