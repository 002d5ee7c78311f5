"""The HTML drift page: the verdict line, each figure beside the judge's own noise, and the rows
that changed most with both judges' verdicts and explanations side by side."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from markupsafe import Markup

from evalq.client.output.formats import figure_text
from evalq.client.output.html.borderline import repeat_lines
from evalq.client.output.html.page import render_page
from evalq.client.output.html.report import LABEL_COLORS, ROW_CSS, ROW_MACROS
from evalq.client.output.html.row_views import input_for, row_view
from evalq.comparisons.drift.report import DriftReport
from evalq.core.models import JobConfig, RowInput, RowResult


@dataclass(frozen=True)
class PageSide:
    """One job as the page shows its rows: its config (the dataset's column names), results
    and stored inputs (by id, or by (id, candidate) in a multi-candidate job)."""

    config: JobConfig
    rows: Sequence[RowResult]
    inputs: Mapping[Any, RowInput]


COLOR_OLD = "#4a7bd0"
COLOR_NEW = "#e08a2c"

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>evalq drift {{ r.old_job }} → {{ r.new_job }}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1150px; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; } td, th { border: 1px solid #ccc; padding: 4px 8px; vertical-align: top; }
th { background: #f2f2f2; text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.banner { background: #fff3c4; border: 1px solid #e0c050; padding: 8px 12px; font-weight: bold; }
.verdict-line { font-size: 16px; font-weight: bold; padding: 8px 12px; border-left: 6px solid #999; background: #f6f6f6; }
.verdict-line.drift { border-left-color: #c62828; } .verdict-line.within { border-left-color: #1a7f37; }
.key-old { color: {{ color_old }}; font-weight: bold; } .key-new { color: {{ color_new }}; font-weight: bold; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; } .side { min-width: 0; border-top: 4px solid #ddd; padding-top: 6px; }
.side.old { border-top-color: {{ color_old }}; } .side.new { border-top-color: {{ color_new }}; }
.change { font-family: ui-monospace, monospace; }
{{ row_css }}
</style></head><body>
<h1>evalq drift: <span class="key-old">{{ r.old_job }}</span> ({{ r.old_judge }}) → <span class="key-new">{{ r.new_job }}</span> ({{ r.new_judge }})</h1>
{% if r.simulated %}<p class="banner">SIMULATED JUDGE: these verdicts come from evalq's fake Gemini server, not a real model.</p>{% endif %}
<p class="verdict-line {{ tone }}">{{ r.verdict.line }}</p>
<p class="note">Rule: {{ r.verdict.rule }}.</p>
<p>{{ r.metric }} · rows on both: {{ r.rows_paired }}{% if r.rows_only_old %} · in the old job only: {{ r.rows_only_old }}{% endif %}{% if r.rows_only_new %} · in the new job only: {{ r.rows_only_new }}{% endif %}{% if r.old_versions != r.new_versions %} · model versions {{ r.old_versions|join(", ") }} → {{ r.new_versions|join(", ") }}{% endif %}</p>
<h2>Each figure beside the judge's own noise</h2>
<table class="figures"><tr><th>figure</th><th>old → new</th><th>95% CI</th><th>the judge's own ({{ r.noise.source }}{% if r.noise.job_id %}, {{ r.noise.job_id }}{% endif %})</th></tr>
{% for f in figures %}<tr><th>{{ f[0] }}</th><td class="num">{{ f[1] }}</td><td>{{ f[2] }}</td><td>{{ f[3] }}</td></tr>{% endfor %}
</table>
{% if r.noise.note %}<p class="note">{{ r.noise.note }}</p>{% endif %}
{% if r.units.changes %}<h2>Which way verdicts changed</h2><table class="ways"><tr><th>old</th><th>new</th><th>units</th></tr>
{% for c in r.units.changes %}<tr><td class="change">{{ c.before }}</td><td class="change">{{ c.after }}</td><td class="num">{{ c.units }}</td></tr>{% endfor %}</table>{% endif %}
{% if r.units.left_out %}<p class="note">Left out (never counted as a change): {% for k, v in r.units.left_out.items() %}{{ k }} {{ v }}{% if not loop.last %}, {% endif %}{% endfor %}.</p>{% endif %}
<h2>Score ({{ r.value }})</h2>
<table class="scores"><tr><th>scope</th><th>rows</th><th>old</th><th>new</th><th>change</th><th>95% CI</th></tr>
{% for s in scores %}<tr><th>{{ s.scope }}</th><td class="num">{{ s.rows }}</td><td class="num">{{ num(s.mean_old) }}</td><td class="num">{{ num(s.mean_new) }}</td><td class="num">{{ signed(s.change) }}</td><td>{% if s.ci95 %}[{{ signed(s.ci95[0]) }}, {{ signed(s.ci95[1]) }}]{% else %}n/a{% endif %}</td></tr>{% endfor %}</table>
{% if r.ranking %}<h2>The candidates' order</h2>
<p>{{ r.ranking.basis }}, {{ r.ranking.rows }} rows. Kendall's tau-b {{ num(r.ranking.tau) }}{% if r.ranking.tau_ci95 %}, 95% CI [{{ num(r.ranking.tau_ci95[0]) }}, {{ num(r.ranking.tau_ci95[1]) }}]{% endif %}.</p>
<table class="ranking"><tr><th>place</th><th class="key-old">old</th><th class="key-new">new</th></tr>
{% for i in range(r.ranking.old_order|length) %}<tr><td class="num">{{ i + 1 }}</td><td>{{ r.ranking.old_order[i] }} ({{ num(r.ranking.old_means[r.ranking.old_order[i]]) }})</td><td>{{ r.ranking.new_order[i] }} ({{ num(r.ranking.new_means[r.ranking.new_order[i]]) }})</td></tr>{% endfor %}</table>
{% for s in r.ranking.swaps %}<p class="swap"><b>swapped:</b> {{ s.ahead_before }} was ahead of {{ s.ahead_after }}; under the new judge {{ s.ahead_after }} is ahead.</p>{% else %}<p class="note">No pair of candidates swaps.</p>{% endfor %}{% endif %}
{% if r.human %}<h2>Agreement with the people</h2><p>{{ r.human.line }}</p>
<table><tr><th>level</th><th>statistic</th><th class="key-old">old</th><th class="key-new">new</th><th>labels</th></tr>
{% for h in r.human.levels %}<tr><td>{{ h.level }}</td><td>{{ h.statistic }}</td><td class="num">{{ num(h.old) }}</td><td class="num">{{ num(h.new) }}</td><td class="num">{{ h.labels }}</td></tr>{% endfor %}</table>{% endif %}
<h2>Rows that changed most</h2>
{% for c in cards %}<div class="card changed-row">
<div><b>{{ c.row.id }}</b>{% if c.row.candidate %} ({{ c.row.candidate }}){% endif %} · line {{ c.row.line }} · {{ c.row.changed }} of {{ c.row.units }} verdicts changed · score <span class="key-old">{{ num(c.row.score_old) }}</span> → <span class="key-new">{{ num(c.row.score_new) }}</span></div>
<ul>{% for u in c.row.changes %}<li>{{ u.unit }}: <span class="key-old change">{{ u.old }}</span> → <span class="key-new change">{{ u.new }}</span></li>{% endfor %}</ul>
<div class="sides">{% for side in c.sides %}<div class="side {{ side.key }}"><div class="key-{{ side.key }}">{{ side.title }}</div>
{% if side.view %}{{ row_body(side.view, colors) }}{{ repeat_block(side.repeats) }}{% else %}<p class="note">no row on this side</p>{% endif %}</div>{% endfor %}</div>
</div>{% else %}<p class="note">No verdict changed.</p>{% endfor %}
{% for n in r.notes %}<p class="note">note: {{ n }}</p>{% endfor %}
</body></html>
"""

_HELPERS = {
    "fmt": figure_text,
    "num": figure_text,
    "signed": partial(figure_text, signed=True),
    "row_css": Markup(ROW_CSS),
    "colors": LABEL_COLORS,
    "color_old": COLOR_OLD,
    "color_new": COLOR_NEW,
}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _pcts(bounds: tuple[float, float] | None) -> str:
    return "n/a" if bounds is None else f"[{bounds[0]:.1%}, {bounds[1]:.1%}]"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def figure_rows(r: DriftReport) -> list[tuple[str, str, str, str]]:
    """(figure, value, interval, the judge's own) for the table at the top."""
    u, n = r.units, r.noise
    rows = [
        (
            "verdicts changed",
            f"{u.changed} of {u.units} ({_pct(u.share)})",
            _pcts(u.ci95),
            f"{_pct(n.share)} {_pcts(n.ci95)}" if n.share is not None else "unknown",
        )
    ]
    if u.kappa is not None:
        rows.append(
            (
                u.kappa.method,
                _num(u.kappa.value),
                "n/a"
                if u.kappa.ci95 is None
                else f"[{_num(u.kappa.ci95[0])}, {_num(u.kappa.ci95[1])}]",
                _num(n.kappa) if n.kappa is not None else "n/a",
            )
        )
    rows.append((f"Krippendorff's alpha ({u.alpha_level})", _num(u.alpha), "", _num(n.alpha)))
    s = r.score
    rows.append(
        (
            f"mean score change ({r.value})",
            "n/a" if s.change is None else f"{s.change:+.3f}",
            "n/a" if s.ci95 is None else f"[{s.ci95[0]:+.3f}, {s.ci95[1]:+.3f}]",
            _own_mean(n.mean_margin, n.mean_change, n.mean_change_ci95),
        )
    )
    return rows


def _own_mean(margin: float | None, change: float | None, ci: tuple[float, float] | None) -> str:
    """The mean's own noise: the spread from repeats, and a retest's change with its interval."""
    said = [] if margin is None else [f"±{margin:.3f}"]
    if change is not None:
        interval = "" if ci is None else f" [{ci[0]:+.3f}, {ci[1]:+.3f}]"
        said.append(f"retest {change:+.3f}{interval}")
    return "; ".join(said) or "n/a"


def render_drift(report: DriftReport, sides: Mapping[str, PageSide]) -> str:
    """The page; ``sides`` ("old", "new") give the changed rows' views."""
    cells = {key: {(r.id, r.candidate): r for r in page.rows} for key, page in sides.items()}

    def side(key: str, row_id: str, candidate: str | None) -> dict[str, Any]:
        page = sides[key]
        result = cells[key].get((row_id, candidate))
        judge = report.old_judge if key == "old" else report.new_judge
        title = f"{key}: {report.old_job if key == 'old' else report.new_job} ({judge})"
        if result is None:
            return {"key": key, "title": title, "view": None, "repeats": ()}
        view = row_view(page.config.metric, result, input_for(page.inputs, result), page.config)
        return {"key": key, "title": title, "view": view, "repeats": repeat_lines(result)}

    cards = [
        {
            "row": row,
            "sides": [side("old", row.id, row.candidate), side("new", row.id, row.candidate)],
        }
        for row in report.changed_rows
    ]
    drift = report.verdict.drift
    return render_page(
        ROW_MACROS + PAGE,
        _HELPERS,
        r=report,
        tone="drift" if drift else "within" if drift is False else "unknown",
        figures=figure_rows(report),
        scores=[report.score, *report.tags, *report.groups],
        cards=cards,
    )
