"""The HTML report: summary, the borderline verdicts, per-tag chart, metric figures, and per row
what the judge was shown and what it said, in one self-contained file. Autoescaping is on;
nothing is marked safe except the SVG and thumbnails this module builds itself."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from markupsafe import Markup

from evalq.client.output.formats import cost_line, money
from evalq.client.output.html.borderline import (
    BORDERLINE_BELOW,
    borderline,
    repeat_lines,
    row_anchor,
)
from evalq.client.output.html.figures import figure_tables
from evalq.client.output.html.page import render_page
from evalq.client.output.html.row_views import input_for, row_name, row_view, shows_media
from evalq.client.output.human_agreement import REPORT_HEADER, left_out_text, report_rows
from evalq.client.output.noise_floor import noise_rows
from evalq.core.data_roots import DataRoots, read_file
from evalq.core.models import JobConfig, JobSummary, MediaRef, RowInput, RowResult

_THUMB_PX = 160
LABEL_COLORS = {
    "supported": "#d9f2d9",
    "unsupported": "#fde2c8",
    "contradictory": "#f8c9c9",
    "no_rad": "#e8e8e8",
}


# A preview reads at most this much of a local file, as a worker would.
_PREVIEW_MAX_BYTES = 20 * 1024 * 1024


def thumbnail(ref: MediaRef | None, roots: DataRoots | None = None) -> Markup:
    """An <img> for a row's media: a small inlined JPEG for local or inline images, the URL for
    remote ones, a note otherwise. Never raises: a report must render whatever the data holds.

    A local file is read only under the job's data roots, bounded in size, through the same
    checks a worker makes: the path stored with the row was checked at submit, but what it
    points at may have changed since (a link swapped in). Without roots there is no preview."""
    if ref is None:
        return Markup("")
    if ref.kind == "url":
        return Markup('<img class="thumb" src="{}" alt="media" loading="lazy">').format(ref.value)
    try:
        from PIL import Image

        if ref.kind == "path" and roots is None:
            raise ValueError("no data roots to read the preview under")
        data = (
            read_file(ref.value, roots, _PREVIEW_MAX_BYTES, "preview", "media")
            if ref.kind == "path" and roots is not None
            else base64.b64decode(ref.value)
            if ref.kind == "inline"
            else b""
        )
        if not data:
            return Markup('<span class="note">{}</span>').format(ref.value)
        with Image.open(io.BytesIO(data)) as image:
            image.seek(0)
            frame = image.convert("RGB")
            frame.thumbnail((_THUMB_PX, _THUMB_PX))
            buf = io.BytesIO()
            frame.save(buf, format="JPEG", quality=80)
        encoded = base64.b64encode(buf.getvalue()).decode()
        return Markup('<img class="thumb" src="data:image/jpeg;base64,{}" alt="media">').format(
            encoded
        )
    except Exception:
        return Markup('<span class="note">no preview ({})</span>').format(
            Path(ref.value).name if ref.kind == "path" else ref.kind
        )


def label_width(labels: Iterable[str], font_px: float) -> float:
    """Room for the longest label at `font_px` in a chart: a wide sans-serif glyph's advance
    per character, so no label starts left of its chart."""
    return max((len(label) for label in labels), default=0) * font_px * 0.65 + 8


def tag_chart(
    tag_scores: Mapping[str, float],
    tag_counts: Mapping[str, int],
    tag_ci95: Mapping[str, tuple[float, float] | None] | None = None,
) -> Markup:
    """Horizontal bars, one per tag, each with its 95% interval as a whisker and its row count
    (inline SVG: no script, no external library)."""
    if not tag_scores:
        return Markup("")
    intervals = tag_ci95 or {}
    bar_w, row_h = 320, 22
    label_w = max(110, round(label_width(tag_scores, 13)))
    height = row_h * len(tag_scores) + 10
    parts = [
        f'<svg class="chart" width="{label_w + bar_w + 260}" height="{height}" role="img" aria-label="per-tag scores">'
    ]
    for i, (tag, score) in enumerate(sorted(tag_scores.items())):
        y = 5 + i * row_h
        width = max(1, round(score * bar_w))
        bounds = intervals.get(tag)
        whisker = Markup("")
        label = Markup("{:.3f} ({} rows)").format(score, tag_counts.get(tag, 0))
        if bounds is not None:
            low, high = label_w + bounds[0] * bar_w, label_w + bounds[1] * bar_w
            mid = y + (row_h - 6) / 2 + 2
            whisker = Markup(
                '<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#222"></line>'
                '<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#222"></line>'
                '<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#222"></line>'
            ).format(low, mid, high, mid, low, mid - 4, low, mid + 4, high, mid - 4, high, mid + 4)
            label = Markup("{:.3f} [{:.3f}, {:.3f}] ({} rows)").format(
                score, bounds[0], bounds[1], tag_counts.get(tag, 0)
            )
        parts.append(
            str(
                Markup(
                    '<text x="{}" y="{}" text-anchor="end" font-size="13">{}</text>'
                    '<rect x="{}" y="{}" width="{}" height="{}" fill="#4a7bd0"></rect>'
                    '<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#bbb"></rect>'
                    "{}"
                    '<text x="{}" y="{}" font-size="12">{}</text>'
                ).format(
                    label_w - 6,
                    y + 14,
                    tag,
                    label_w,
                    y + 2,
                    width,
                    row_h - 6,
                    label_w,
                    y + 2,
                    bar_w,
                    row_h - 6,
                    whisker,
                    label_w + bar_w + 6,
                    y + 14,
                    label,
                )
            )
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)[:4000]


# The look of one row, shared with the comparison report (evalq.client.output.html.comparison).
ROW_CSS = """
.card { border: 1px solid #ddd; border-radius: 6px; padding: 10px; margin: 12px 0; min-width: 0; overflow-wrap: anywhere; }
.row { display: flex; gap: 14px; } .row > .body { flex: 1; min-width: 0; }
.thumb { max-width: 160px; max-height: 160px; border: 1px solid #ccc; }
.ok { color: #1a7f37; } .bad { color: #c62828; } .unscored { color: #8a6d00; } .plain { color: #222; }
.status-failed { background: #fdecea; } .status-partial { background: #fff8e1; }
.note { color: #666; font-size: 12px; }
pre { background: #f7f7f7; padding: 6px; max-height: 240px; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; max-width: 100%; box-sizing: border-box; }
.text { margin: 6px 0; } .text .label { font-size: 12px; color: #555; font-weight: bold; }
.text .value { white-space: pre-wrap; background: #fafafa; border-left: 3px solid #c8d3e6; padding: 4px 8px; }
.verdict { margin: 6px 0; padding: 4px 8px; border-left: 3px solid #ddd; }
.verdict .why, td .why { color: #333; margin: 2px 0 0 12px; font-size: 13px; }
.sentence { padding: 1px 3px; border-radius: 3px; }
.sentence.void { background: #eee !important; color: #777; }
table.questions { width: 100%; } .card td { overflow-wrap: anywhere; }
details > summary { cursor: pointer; color: #555; font-size: 12px; }
.undecided { background: #f8c9c9; color: #7a0000; font-weight: bold; padding: 0 4px; border-radius: 3px; }
.borderline { background: #fff3c4; color: #6b5200; font-weight: bold; padding: 0 4px; border-radius: 3px; }
.repeat { margin: 4px 0; padding: 2px 8px; border-left: 3px solid #c8d3e6; font-size: 13px; }
.repeat.state-undecided { border-left-color: #c62828; } .repeat.state-borderline { border-left-color: #e0c050; }
"""

ROW_MACROS = """
{%- macro row_body(v, colors) -%}
<div class="head"><b>{{ v.name }}</b> · {{ v.status }} · score {{ fmt(v.score) }}{% if v.coverage is not none %} · keyword coverage {{ fmt(v.coverage) }}{% endif %}{% if v.simulated %} · <span class="note">simulated</span>{% endif %}</div>
<div class="{{ v.tone }}"><b>{{ v.headline }}</b></div>
{% if v.error %}<div class="bad">{{ v.error }}</div>{% endif %}
{% for t in v.texts %}{% if t.folded %}<details class="text"><summary><span class="label">{{ t.label }}</span> ({{ t.text|length }} characters)</summary><div class="value">{{ t.text }}</div></details>
{% else %}<div class="text"><div class="label">{{ t.label }}</div><div class="value">{{ t.text }}</div></div>{% endif %}{% endfor %}
{% for line in v.verdicts %}<div class="verdict"><span class="note">{{ line.who }}:</span> <span class="{{ line.tone }}"><b>{{ line.verdict }}</b></span>
{% for which, words in line.explanations %}<div class="why"><i>{{ which }}</i>{% if words %}: {{ words }}{% endif %}</div>{% endfor %}</div>{% endfor %}
{% for b in v.sentence_blocks %}<div class="verdict"><span class="note">{{ b.judge }}:</span> <span class="{{ b.tone }}"><b>{{ b.outcome }}</b></span>
{% if b.note %}<div class="note">{{ b.note }}</div>{% endif %}
<p>{% for sent in b.sentences %}<span class="sentence{% if not sent.counted %} void{% endif %}" style="background: {{ colors.get(sent.label, '#eee') }}" title="{{ sent.label }}{% if not sent.counted %} (not counted){% endif %}: {{ sent.rationale }}">{{ sent.text }}</span><sup class="note">{{ sent.label }}{% if not sent.counted %}, not counted{% endif %}</sup> {% endfor %}</p></div>
{% endfor %}
{% if v.questions %}<table class="questions"><tr><th>question</th><th>tag</th><th>expected</th><th>answer</th><th>result</th></tr>
{% for q in v.questions %}<tr><td>{{ q.question }}{% if q.weight != 1 %} <span class="note">(weight {{ q.weight }})</span>{% endif %}{% if q.rationale %}<div class="why">{{ q.rationale }}</div>{% endif %}</td><td>{{ q.tag }}</td><td>{{ q.expected }}</td><td>{{ q.answer if q.answer is not none else "" }}</td>
<td>{% if q.status == "unscored" %}<span class="unscored">unscored: {{ q.reason }}{% if q.detail %} ({{ q.detail }}){% endif %}</span>{% elif q.result == 1 %}<span class="ok">✓</span>{% elif q.result == 0 %}<span class="bad">✗</span>{% else %}{{ q.answer or "" }}{% endif %}</td></tr>{% endfor %}</table>{% endif %}
{%- endmacro %}
{%- macro repeat_state(line) -%}{% if line.state == "undecided" %}<span class="undecided">undecided</span>{% elif line.state == "borderline" %}<span class="borderline">borderline</span>{% elif line.state == "unscored" %}<span class="unscored">unscored</span>{% endif %}{%- endmacro %}
{%- macro repeat_text(line) -%}<b>{{ line.unit }}</b>{% if line.judge %} <span class="note">by {{ line.judge }}</span>{% endif %}: {{ line.tally }}{% if line.certainty is not none %} · certainty {{ "%.2f"|format(line.certainty) }}{% endif %}{% if line.interval %} · mean's 95% interval [{{ fmt(line.interval[0]) }}, {{ fmt(line.interval[1]) }}]{% endif %}{%- endmacro %}
{%- macro repeat_block(lines) -%}
{% for line in lines %}<div class="repeat state-{{ line.state }}">{{ repeat_state(line) }} {{ repeat_text(line) }}<div class="note">samples: {{ line.answers }}{% if line.rule %} · rule {{ line.rule }}{% endif %}</div></div>
{% endfor %}
{%- endmacro %}
{%- macro label_key(colors) -%}<p class="note">{% for k, c in colors.items() %}<span class="sentence" style="background: {{ c }}">{{ k }}</span> {% endfor %}<span class="sentence void">not counted</span></p>{%- endmacro %}
"""


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>evalq report {{ s.name or s.job_id }}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1150px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; } h3 { font-size: 14px; }
table { border-collapse: collapse; margin: 8px 0; } td, th { border: 1px solid #ccc; padding: 4px 8px; vertical-align: top; }
th { background: #f2f2f2; text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.banner { background: #fff3c4; border: 1px solid #e0c050; padding: 8px 12px; font-weight: bold; }
{{ row_css }}
</style></head><body>
<h1>evalq job {{ s.name or s.job_id }} · {{ s.metric }} · judge {{ s.judge_model }}</h1>
{% if border and (border.undecided or border.borderline) %}<p class="borderline-count"><b>{{ border.headline }}</b>: <a href="#borderline">listed below</a></p>{% endif %}
{% if s.simulated %}<p class="banner">SIMULATED JUDGE: these verdicts come from evalq's fake Gemini server, not a real model.</p>{% endif %}
<table>
{% if s.name %}<tr><th>job</th><td>{{ s.job_id }}</td></tr>{% endif %}
<tr><th>status</th><td>{{ s.status }} ({{ s.rows_done }}/{{ s.rows_total }} rows){% if s.pause_reason %} · paused: {{ s.pause_reason }}{% endif %}</td></tr>
<tr><th>mean score{% if s.mean_score_scope != "all rows" %}, {{ s.mean_score_scope }}{% elif s.candidates %}, all candidates pooled{% endif %}</th><td>{{ fmt(s.mean_score) }}{% if s.ci95 %} · 95% CI [{{ fmt(s.ci95[0]) }}, {{ fmt(s.ci95[1]) }}] ({{ s.ci_method }}, {{ s.rows_scored + s.rows_partial }} rows){% endif %}{% if s.candidates %} <span class="note">(each candidate's own figures below)</span>{% endif %}</td></tr>
<tr><th>rows</th><td>scored {{ s.rows_scored }} · partial {{ s.rows_partial }} · failed {{ s.rows_failed }}{% for k, v in s.rows_failed_by_reason.items() %} · failed ({{ k }}) {{ v }}{% endfor %}</td></tr>
<tr><th>unscored {{ s.judged_units or "verdicts" }}</th><td>{% for k, v in s.unscored_by_reason.items() %}{{ k }} {{ v }}{% if not loop.last %}, {% endif %}{% else %}none{% endfor %}</td></tr>
<tr><th>judge calls</th><td>{{ s.judge_calls }} · retries {{ s.retries }} · 429s {{ s.rate_limited }} · cache hits {{ s.cache_hits }} · limiter wait {{ fmt(s.limiter_wait_s) }} s</td></tr>
<tr><th>tokens</th><td>prompt {{ s.prompt_tokens }} · output {{ s.output_tokens }}{% if s.candidate_calls %} · model under test: {{ s.candidate_calls }} calls, {{ s.candidate_prompt_tokens }} + {{ s.candidate_output_tokens }} tokens{% endif %}</td></tr>
<tr><th>cost</th><td>{{ cost }}</td></tr>
{% if s.usage %}<tr><th>tokens and cost by role and model</th><td><table class="usage"><tr><th>role</th><th>model</th><th>calls</th><th>prompt</th><th>output</th><th>thinking</th><th>cached</th><th>cost</th></tr>
{% for u in s.usage %}<tr><td>{{ u.role }}</td><td>{{ u.model }}</td><td>{{ u.calls }}</td><td>{{ u.prompt }}</td><td>{{ u.output }}</td><td>{{ u.thought }}</td><td>{{ u.cached }}</td><td>{% if u.cost_usd is none %}price unknown{% else %}{{ money(u.cost_usd) }}{% endif %}</td></tr>
{% endfor %}</table>{% for model, price in s.prices.items() %}<div class="note">{{ model }}: {{ price }}</div>{% endfor %}</td></tr>{% endif %}
{% if border %}<tr><th>repeated verdicts</th><td>{{ border.verdicts }} verdicts from {{ border.samples }} samples ({{ fmt(border.samples / border.verdicts) }} per verdict) · {{ border.headline }}</td></tr>{% endif %}
<tr><th>thinking</th><td>{% for role, value in s.thinking.items() %}{{ role }} {{ value }}{% if not loop.last %} · {% endif %}{% else %}not set{% endfor %}; {{ s.thought_tokens }} thought tokens{% if s.candidate_thought_tokens %} (+{{ s.candidate_thought_tokens }} by the model under test){% endif %}</td></tr>
</table>
{% if border and border.listed %}<h2 id="borderline">Borderline verdicts</h2>
<p class="note">Undecided verdicts (split at the maximum: each counts as the split vote it is), then the least certain decided ones (certainty under {{ "%.2f"|format(borderline_below) }}), least sure first{% if border.more %}; {{ border.more }} more not listed (sort the CSV's certainty column){% endif %}.</p>
<table class="borderline-list"><tr><th>row</th><th></th><th>verdict</th><th>samples</th></tr>
{% for e in border.listed %}<tr><td>{% if e.anchor %}<a href="#{{ e.anchor }}">{{ e.row }}</a>{% else %}{{ e.row }} <span class="note">(beyond the rows shown)</span>{% endif %}</td><td>{{ repeat_state(e.line) }}</td><td>{{ repeat_text(e.line) }}</td><td class="note">{{ e.line.answers }}</td></tr>
{% endfor %}</table>{% endif %}
{% if s.candidates %}<h2>Per candidate</h2>
<table class="candidates"><tr><th>candidate</th><th>mean score</th><th>95% CI</th><th>method</th><th>rows</th><th>scored</th><th>partial</th><th>failed</th><th>tag scores</th></tr>
{% for name, c in s.candidates.items() %}<tr><td><b>{{ name }}</b></td><td class="num">{{ fmt(c.mean_score) }}</td><td>{% if c.ci95 %}[{{ fmt(c.ci95[0]) }}, {{ fmt(c.ci95[1]) }}]{% else %}n/a{% endif %}</td><td>{{ c.ci_method or "" }}</td><td class="num">{{ c.rows }}</td><td class="num">{{ c.rows_scored }}</td><td class="num">{{ c.rows_partial }}</td><td class="num">{{ c.rows_failed }}</td><td>{% for tag, v in c.tag_scores.items() %}{{ tag }} {{ fmt(v) }} ({{ c.tag_counts.get(tag, 0) }}){% if not loop.last %} · {% endif %}{% else %}<span class="note">none</span>{% endfor %}</td></tr>
{% endfor %}</table>{% endif %}
{% if s.groups %}<h2>Groups ({{ s.group_by|join(", ") or "by column" }})</h2>
<table class="groups"><tr><th>column</th><th>value</th>{% if has_group_candidates %}<th>candidate</th>{% endif %}<th>rows</th><th>scored</th><th>mean score</th><th>95% CI</th><th>method</th><th>tag scores</th></tr>
{% for g in s.groups %}<tr><td>{{ g.column }}</td><td><b>{{ g.value }}</b></td>{% if has_group_candidates %}<td>{{ g.candidate or "" }}</td>{% endif %}<td class="num">{{ g.rows }}</td><td class="num">{{ g.rows_scored }}</td><td class="num">{{ fmt(g.mean_score) }}</td><td>{% if g.ci95 %}[{{ fmt(g.ci95[0]) }}, {{ fmt(g.ci95[1]) }}]{% else %}n/a{% endif %}</td><td>{{ g.ci_method or "" }}</td><td>{% for tag, v in g.tag_scores.items() %}{{ tag }} {{ fmt(v) }} ({{ g.tag_counts.get(tag, 0) }}){% if not loop.last %} · {% endif %}{% endfor %}</td></tr>
{% endfor %}</table>{% endif %}
{% if s.tag_scores %}<h2 id="per-tag-scores">Per-tag scores{% if s.candidates %} (all candidates pooled){% endif %}</h2>{{ chart }}
<table class="tags"><tr><th>tag</th><th>score</th><th>95% CI</th><th>method</th><th>rows</th></tr>
{% for tag, score in s.tag_scores.items() %}{% set ci = s.tag_ci95.get(tag) %}<tr><td>{{ tag }}</td><td>{{ fmt(score) }}</td><td>{% if ci %}[{{ fmt(ci[0]) }}, {{ fmt(ci[1]) }}]{% else %}n/a{% endif %}</td><td>{{ s.tag_ci_method.get(tag) or "" }}</td><td>{{ s.tag_counts.get(tag, 0) }}</td></tr>
{% endfor %}</table>{% endif %}
{% if s.human_agreement %}<h2>Agreement with human labels</h2>
{% if s.human_agreement.note %}<p class="note">{{ s.human_agreement.note }}</p>{% endif %}
{% if s.human_agreement.levels %}<table class="human"><tr>{% for h in human_header %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in human_rows %}<tr>{% for c in row %}<td>{{ c }}</td>{% endfor %}</tr>{% endfor %}</table>
{% for lv in s.human_agreement.levels %}<div class="note">{{ lv.level }} ({{ lv.source }}, against {{ lv.judge_value }}{% if lv.pairs_grouped_by %}; pairs share the {{ lv.pairs_grouped_by }}{% endif %}{% if lv.kappa_weights %}; kappa {{ lv.kappa_weights }}-weighted{% endif %}): {{ lv.labels_used }} labels used, {{ left_out(lv) }}{% for m in lv.left_out_examples %}<br>· {{ m }}{% endfor %}</div>{% endfor %}{% endif %}
{% endif %}
{% if noise_rows %}<h2>The judge's noise floor</h2>
<table class="noise">{% for label, value in noise_rows %}<tr><th>{{ label }}</th><td>{{ value }}</td></tr>{% endfor %}</table>
<p class="note">From the job's repeated units (each an independent judge call): how often the judge disagrees with itself. See the manual's page on the noise floor.</p>{% endif %}
{% if figures %}<h2>Metric figures</h2>
{% for t in figures %}<h3>{{ t.title }}</h3><table class="figures"><tr>{% for h in t.header %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in t.rows %}<tr>{% for c in row %}{% if loop.first %}<th>{{ c }}</th>{% else %}<td class="num">{{ c }}</td>{% endif %}{% endfor %}</tr>{% endfor %}</table>
{% endfor %}{% endif %}
{% if s.warnings %}<h2>Warnings</h2><ul>{% for w in s.warnings %}<li>{{ w }}</li>{% endfor %}</ul>{% endif %}
<h2>Rows{% if rows|length < total_rows %} (first {{ rows|length }} of {{ total_rows }}){% endif %}</h2>
{% if has_sentences %}{{ label_key(colors) }}{% endif %}
{% for r in rows %}
<div class="card row status-{{ r.view.status }}" id="{{ r.anchor }}" data-row="{{ r.view.name }}">
  {% if r.thumb %}<div>{{ r.thumb }}</div>{% endif %}
  <div class="body">
    {{ row_body(r.view, colors) }}
    {{ repeat_block(r.repeats) }}
    {% if r.details %}<details><summary>raw details</summary><pre>{{ pretty(r.details) }}</pre></details>{% endif %}
  </div>
</div>
{% endfor %}
</body></html>
"""

TEMPLATE = ROW_MACROS + PAGE


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


# What the page formats and colours with, the same on every render.
_HELPERS = {
    "fmt": _fmt,
    "pretty": _pretty,
    "row_css": Markup(ROW_CSS),
    "money": money,
    "colors": LABEL_COLORS,
    "human_header": REPORT_HEADER,
    "left_out": left_out_text,
    "borderline_below": BORDERLINE_BELOW,
}


def render_report(
    summary: JobSummary,
    results: Iterable[RowResult],
    *,
    inputs: Mapping[Any, RowInput] | None = None,
    max_rows: int = 500,
    data_roots: Iterable[str] = (),
    config: JobConfig | None = None,
) -> str:
    """The report page. `inputs` are the stored rows by id, or by (id, candidate) to give a
    multi-candidate job's every cell its own texts; `config` (the job's) names each judged
    text by the dataset's column (--map, --candidates)."""
    results = list(results)
    inputs = inputs or {}
    roots = DataRoots.of(list(data_roots)) if data_roots else None
    rows: list[dict[str, Any]] = []
    for index, result in enumerate(results[:max_rows]):
        row_input = input_for(inputs, result)
        ref = _media_of(row_input, result.candidate) if shows_media(summary.metric) else None
        view = row_view(summary.metric, result, row_input, config)
        rows.append(
            {
                "view": view,
                "thumb": thumbnail(ref, roots),
                "details": result.details,
                "anchor": row_anchor(index),
                "repeats": repeat_lines(result),
            }
        )
    names = {i: row_name(result) for i, result in enumerate(results)}
    return render_page(
        TEMPLATE,
        _HELPERS,
        s=summary,
        rows=rows,
        total_rows=len(results),
        chart=tag_chart(summary.tag_scores, summary.tag_counts, summary.tag_ci95),
        figures=figure_tables(summary.metric_summary),
        has_sentences=any(r["view"].sentence_blocks for r in rows),
        has_group_candidates=any(g.candidate for g in summary.groups),
        cost=cost_line(summary),
        border=borderline(results, names, len(rows)),
        human_rows=report_rows(summary.human_agreement) if summary.human_agreement else [],
        noise_rows=noise_rows(summary.noise_floor),
    )


def _media_of(row_input: RowInput | None, candidate: str | None) -> MediaRef | None:
    """The media the judge looked at: the candidate's column in a multi-candidate cell."""
    if row_input is None or not row_input.media:
        return None
    if candidate is not None and candidate in row_input.media:
        return row_input.media[candidate]
    return next(iter(row_input.media.values()))
