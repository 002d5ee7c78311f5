"""The HTML comparison report: per pair, the overall difference, per-tag side-by-side bars with
the paired interval of each difference, and the rows that differ most with both sides' media,
questions and answers. One self-contained file; autoescaping on, as in evalq.client.report."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import Environment, select_autoescape
from markupsafe import Markup

from evalq.client.compare_render import counts_line
from evalq.client.report import thumbnail
from evalq.comparisons.comparison import Comparison, PairComparison, side_by_side
from evalq.comparisons.paired_rows import PairedRow
from evalq.core.data_roots import DataRoots
from evalq.core.models import MediaRef, RowInput
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
    """One line per figure (overall, then each tag): A's and B's means as two bars on [0, 1],
    then the paired difference A - B as a dot with its 95% interval on [-1, 1]."""
    lines: list[tuple[str, PairedDifference]] = [("overall", pair.overall)]
    lines += [(tag, d.stats) for tag, d in pair.tags.items()]
    label_w, bar_w, gap, diff_w, row_h = 120, 220, 30, 260, 34
    width = label_w + bar_w + gap + diff_w + 170
    height = row_h * len(lines) + 34
    zero = label_w + bar_w + gap + diff_w / 2
    parts: list[Markup] = [
        _text(label_w + bar_w / 2, 14, "mean score (0 to 1)", "middle"),
        _text(zero, 14, f"difference {pair.a} - {pair.b} (-1 to +1), 95% CI", "middle"),
        _line(zero, 20, zero, height - 4, "#999"),
    ]
    for i, (name, stats) in enumerate(lines):
        y = 24 + i * row_h
        parts.append(_text(label_w - 6, y + 17, f"{name} ({stats.n} rows)", "end"))
        for j, (mean, color) in enumerate(((stats.mean_a, COLOR_A), (stats.mean_b, COLOR_B))):
            if mean is None:
                continue
            parts.append(_rect(label_w, y + 3 + j * 13, mean * bar_w, 11, color))
            parts.append(_text(label_w + mean * bar_w + 4, y + 12 + j * 13, f"{mean:.3f}", size=10))
        parts.append(
            Markup(
                '<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#ddd"></rect>'
            ).format(label_w, y + 2, bar_w, 27)
        )
        if stats.mean_diff is None:
            continue
        mid = y + 15
        scale = diff_w / 2
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
        '<svg class="chart" width="{}" height="{}" role="img" aria-label="per-tag comparison">{}</svg>'
    ).format(width, height, body)


TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>evalq comparison</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 30px; } h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 8px 0; } td, th { border: 1px solid #ccc; padding: 4px 8px; vertical-align: top; }
th { background: #f2f2f2; text-align: left; }
.banner { background: #fff3c4; border: 1px solid #e0c050; padding: 8px 12px; font-weight: bold; }
.key-a { color: {{ color_a }}; font-weight: bold; } .key-b { color: {{ color_b }}; font-weight: bold; }
.sig { color: #1a7f37; font-weight: bold; } .nsig { color: #777; }
.row { border: 1px solid #ddd; border-radius: 6px; padding: 10px; margin: 12px 0; }
.media { display: flex; gap: 14px; } .media div { text-align: center; font-size: 12px; }
.thumb { max-width: 160px; max-height: 160px; border: 1px solid #ccc; }
.ok { color: #1a7f37; } .bad { color: #c62828; } .unscored { color: #8a6d00; }
.note { color: #777; font-size: 12px; }
</style></head><body>
<h1>evalq comparison: {% for s in c.sides %}{{ s.label }}{% if not loop.last %} · {% endif %}{% endfor %}</h1>
{% if simulated %}<p class="banner">SIMULATED JUDGE: these verdicts come from evalq's fake Gemini server, not a real model.</p>{% endif %}
<table><tr><th>side</th><th>job</th><th>candidate</th><th>metric</th><th>rows</th></tr>
{% for s in c.sides %}<tr><td>{{ s.label }}</td><td>{{ s.job_id }}</td><td>{{ s.candidate or "" }}</td><td>{{ s.metric }}</td><td>{{ s.rows|length }}</td></tr>{% endfor %}</table>
<p class="note">Rows aligned by {{ c.by }}. Paired bootstrap (BCa, {{ c.resamples }} resamples, seed {{ c.seed }}) for the intervals; paired permutation test (exact up to 2^20 sign patterns, else {{ c.permutation_resamples }} draws, seed {{ c.seed }}) for p; sign test on wins and losses. Rows or questions unscored on either side are left out and counted, never scored 0.{% if c.pairs|length > 1 %} {{ c.holm_note }}: significance uses the Holm-adjusted p.{% endif %}</p>
{% for note in c.notes %}<p class="note">note: {{ note }}</p>{% endfor %}
{% for p in pairs %}
<h2><span class="key-a">{{ p.pair.a }}</span> vs <span class="key-b">{{ p.pair.b }}</span></h2>
<p>Mean difference {{ signed(p.pair.overall.mean_diff) }}{% if p.pair.overall.ci95 %}, 95% CI [{{ signed(p.pair.overall.ci95[0]) }}, {{ signed(p.pair.overall.ci95[1]) }}]{% endif %};
p = {{ pv(p.pair.overall.p_permutation) }} ({{ p.pair.overall.p_method }} permutation){% if c.pairs|length > 1 %}, Holm {{ pv(p.pair.p_holm) }}{% endif %}; sign test p = {{ pv(p.pair.overall.p_sign) }};
wins/ties/losses {{ p.pair.overall.wins }}/{{ p.pair.overall.ties }}/{{ p.pair.overall.losses }}:
{% if p.pair.significant(c.alpha) %}<span class="sig">significant at {{ c.alpha }}</span>{% else %}<span class="nsig">not significant at {{ c.alpha }}</span>{% endif %}</p>
<p class="note">{{ p.counts }}</p>
<p><span class="key-a">■ {{ p.pair.a }}</span> &nbsp; <span class="key-b">■ {{ p.pair.b }}</span></p>
{{ p.chart }}
<table><tr><th>tag</th><th>rows</th><th>{{ p.pair.a }}</th><th>{{ p.pair.b }}</th><th>diff</th><th>95% CI</th><th>p perm</th><th>p Holm (tags)</th><th>W/T/L</th></tr>
{% for tag, d in p.pair.tags.items() %}<tr><td>{{ tag }}</td><td>{{ d.stats.n }}</td><td>{{ num(d.stats.mean_a) }}</td><td>{{ num(d.stats.mean_b) }}</td><td>{{ signed(d.stats.mean_diff) }}</td><td>{% if d.stats.ci95 %}[{{ signed(d.stats.ci95[0]) }}, {{ signed(d.stats.ci95[1]) }}]{% else %}n/a{% endif %}</td><td>{{ pv(d.stats.p_permutation) }}</td><td>{{ pv(d.p_holm) }}</td><td>{{ d.stats.wins }}/{{ d.stats.ties }}/{{ d.stats.losses }}</td></tr>
{% endfor %}</table>
<h3>Rows that differ most</h3>
{% for r in p.rows %}<div class="row">
<div><b>{{ r.row.row.id }}</b> · {{ r.row.row.prompt }} · <span class="key-a">{{ num(r.row.score_a) }}</span> vs <span class="key-b">{{ num(r.row.score_b) }}</span> ({{ signed(r.row.diff) }}){% if r.row.questions_left_out %} · {{ r.row.questions_left_out }} questions left out{% endif %}</div>
<div class="media"><div>{{ r.thumb_a }}<br><span class="key-a">{{ p.pair.a }}</span></div><div>{{ r.thumb_b }}<br><span class="key-b">{{ p.pair.b }}</span></div></div>
<table><tr><th>question</th><th>tag</th><th>expected</th><th>{{ p.pair.a }}</th><th>{{ p.pair.b }}</th></tr>
{% for q in r.questions %}<tr><td>{{ q.question }}</td><td>{{ q.tag }}</td><td>{{ q.expected }}</td><td>{{ verdict(q.answer_a, q.result_a, q.reason_a) }}</td><td>{{ verdict(q.answer_b, q.result_b, q.reason_b) }}</td></tr>{% endfor %}</table>
</div>{% else %}<p class="note">No paired row differs.</p>{% endfor %}
{% endfor %}
</body></html>
"""


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def _pv(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _verdict(answer: str | None, result: int | None, reason: str | None) -> Markup:
    if result == 1:
        return Markup('<span class="ok">✓ {}</span>').format(answer or "")
    if result == 0:
        return Markup('<span class="bad">✗ {}</span>').format(answer or "")
    return Markup('<span class="unscored">unscored: {}</span>').format(reason or "missing")


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
) -> str:
    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    roots = {
        label: DataRoots.of(list(folders)) if folders else None
        for label, folders in (data_roots or {}).items()
    }

    def thumb(label: str, row: PairedRow, which: str) -> Markup:
        if media_of is None:
            return Markup("")
        return thumbnail(media_of(label, row, which), roots.get(label))

    pairs: list[dict[str, Any]] = []
    for pair in comparison.pairs:
        rows = [
            {
                "row": r,
                "thumb_a": thumb(pair.a, r, "a"),
                "thumb_b": thumb(pair.b, r, "b"),
                "questions": side_by_side(r),
            }
            for r in pair.top_rows(top)
        ]
        pairs.append(
            {
                "pair": pair,
                "chart": difference_chart(pair),
                "rows": rows,
                "counts": counts_line(pair),
            }
        )
    return env.from_string(TEMPLATE).render(
        c=comparison,
        pairs=pairs,
        simulated=any(s.simulated for s in comparison.sides),
        num=_num,
        signed=_signed,
        pv=_pv,
        verdict=_verdict,
        color_a=COLOR_A,
        color_b=COLOR_B,
    )
