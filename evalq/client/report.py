"""The HTML report: summary, per-tag chart, metric figures (rankings, win matrices), and per row
what the judge was shown and what it said. One self-contained file (thumbnails inlined).

Everything from a dataset or a judge is untrusted: Jinja2 autoescaping is on, and nothing is
marked safe except the SVG and thumbnails this module builds itself.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from jinja2 import Environment, select_autoescape
from markupsafe import Markup

from evalq.client.render import cost_line, money
from evalq.core.data_roots import DataRoots, read_file
from evalq.core.models import JobSummary, MediaRef, RowInput, RowResult

_THUMB_PX = 160
_LABEL_COLORS = {
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
    bar_w, row_h, label_w = 320, 22, 110
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


def _find_sentences(value: Any) -> list[dict[str, Any]]:
    """Labelled sentences anywhere in a row's details (groundedness), first judge's first."""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, dict) and "label" in v and "sentence" in v for v in value)
    ):
        return list(value)
    if isinstance(value, dict):
        for item in value.values():
            if found := _find_sentences(item):
                return found
    if isinstance(value, list):
        for item in value:
            if found := _find_sentences(item):
                return found
    return []


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)[:4000]


TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>evalq report {{ s.job_id }}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; } td, th { border: 1px solid #ccc; padding: 4px 8px; vertical-align: top; }
th { background: #f2f2f2; text-align: left; }
.banner { background: #fff3c4; border: 1px solid #e0c050; padding: 8px 12px; font-weight: bold; }
.row { border: 1px solid #ddd; border-radius: 6px; padding: 10px; margin: 12px 0; display: flex; gap: 14px; }
.thumb { max-width: 160px; max-height: 160px; border: 1px solid #ccc; }
.ok { color: #1a7f37; } .bad { color: #c62828; } .unscored { color: #8a6d00; }
.status-failed { background: #fdecea; } .status-partial { background: #fff8e1; }
.note { color: #777; font-size: 12px; } pre { background: #f7f7f7; padding: 6px; max-height: 240px; overflow: auto; }
.sentence { padding: 1px 3px; border-radius: 3px; }
</style></head><body>
<h1>evalq job {{ s.job_id }} · {{ s.metric }} · judge {{ s.judge_model }}</h1>
{% if s.simulated %}<p class="banner">SIMULATED JUDGE: these verdicts come from evalq's fake Gemini server, not a real model.</p>{% endif %}
<table>
<tr><th>status</th><td>{{ s.status }} ({{ s.rows_done }}/{{ s.rows_total }} rows){% if s.pause_reason %} · paused: {{ s.pause_reason }}{% endif %}</td></tr>
<tr><th>mean score</th><td>{{ fmt(s.mean_score) }}{% if s.ci95 %} · 95% CI [{{ fmt(s.ci95[0]) }}, {{ fmt(s.ci95[1]) }}] ({{ s.ci_method }}, {{ s.rows_scored + s.rows_partial }} rows){% endif %}</td></tr>
<tr><th>rows</th><td>scored {{ s.rows_scored }} · partial {{ s.rows_partial }} · failed {{ s.rows_failed }}{% for k, v in s.rows_failed_by_reason.items() %} · failed ({{ k }}) {{ v }}{% endfor %}</td></tr>
<tr><th>unscored questions</th><td>{% for k, v in s.unscored_by_reason.items() %}{{ k }} {{ v }}{% if not loop.last %}, {% endif %}{% else %}none{% endfor %}</td></tr>
<tr><th>judge calls</th><td>{{ s.judge_calls }} · retries {{ s.retries }} · 429s {{ s.rate_limited }} · cache hits {{ s.cache_hits }} · limiter wait {{ fmt(s.limiter_wait_s) }} s</td></tr>
<tr><th>tokens</th><td>prompt {{ s.prompt_tokens }} · output {{ s.output_tokens }}{% if s.candidate_calls %} · model under test: {{ s.candidate_calls }} calls, {{ s.candidate_prompt_tokens }} + {{ s.candidate_output_tokens }} tokens{% endif %}</td></tr>
<tr><th>cost</th><td>{{ cost }}</td></tr>
{% if s.usage %}<tr><th>tokens and cost by role and model</th><td><table class="usage"><tr><th>role</th><th>model</th><th>calls</th><th>prompt</th><th>output</th><th>thinking</th><th>cached</th><th>cost</th></tr>
{% for u in s.usage %}<tr><td>{{ u.role }}</td><td>{{ u.model }}</td><td>{{ u.calls }}</td><td>{{ u.prompt }}</td><td>{{ u.output }}</td><td>{{ u.thought }}</td><td>{{ u.cached }}</td><td>{% if u.cost_usd is none %}price unknown{% else %}{{ money(u.cost_usd) }}{% endif %}</td></tr>
{% endfor %}</table>{% for model, price in s.prices.items() %}<div class="note">{{ model }}: {{ price }}</div>{% endfor %}</td></tr>{% endif %}
<tr><th>thinking</th><td>{% for role, value in s.thinking.items() %}{{ role }} {{ value }}{% if not loop.last %} · {% endif %}{% else %}not set{% endfor %}; {{ s.thought_tokens }} thought tokens{% if s.candidate_thought_tokens %} (+{{ s.candidate_thought_tokens }} by the model under test){% endif %}</td></tr>
</table>
{% if s.tag_scores %}<h2>Per-tag scores</h2>{{ chart }}
<table class="tags"><tr><th>tag</th><th>score</th><th>95% CI</th><th>method</th><th>rows</th></tr>
{% for tag, score in s.tag_scores.items() %}{% set ci = s.tag_ci95.get(tag) %}<tr><td>{{ tag }}</td><td>{{ fmt(score) }}</td><td>{% if ci %}[{{ fmt(ci[0]) }}, {{ fmt(ci[1]) }}]{% else %}n/a{% endif %}</td><td>{{ s.tag_ci_method.get(tag) or "" }}</td><td>{{ s.tag_counts.get(tag, 0) }}</td></tr>
{% endfor %}</table>{% endif %}
{% if ranking %}<h2>Ranking</h2><table><tr><th>#</th><th>candidate</th><th>strength</th><th>95% CI</th></tr>
{% for r in ranking %}<tr><td>{{ loop.index }}</td><td>{{ r.candidate }}</td><td>{{ fmt(r.strength) }}</td><td>{% if r.ci95 %}[{{ fmt(r.ci95[0]) }}, {{ fmt(r.ci95[1]) }}]{% endif %}</td></tr>{% endfor %}</table>{% endif %}
{% if win_matrix %}<h2>Win matrix (row beat column)</h2><table><tr><th></th>{% for c in win_cols %}<th>{{ c }}</th>{% endfor %}</tr>
{% for a, wins in win_matrix.items() %}<tr><th>{{ a }}</th>{% for c in win_cols %}<td>{{ fmt(wins.get(c)) }}</td>{% endfor %}</tr>{% endfor %}</table>{% endif %}
{% if other_metric %}<h2>Metric figures</h2><table>{% for k, v in other_metric.items() %}<tr><th>{{ k }}</th><td><pre>{{ pretty(v) }}</pre></td></tr>{% endfor %}</table>{% endif %}
{% if s.warnings %}<h2>Warnings</h2><ul>{% for w in s.warnings %}<li>{{ w }}</li>{% endfor %}</ul>{% endif %}
<h2>Rows{% if rows|length < total_rows %} (first {{ rows|length }} of {{ total_rows }}){% endif %}</h2>
{% for r in rows %}
<div class="row status-{{ r.result.status }}">
  <div>{{ r.thumb }}</div>
  <div>
    <div><b>{{ r.result.id }}</b> · {{ r.result.status }} · score {{ fmt(r.result.score) }}{% if r.result.coverage is not none %} · keyword coverage {{ fmt(r.result.coverage) }}{% endif %}{% if r.result.simulated %} · <span class="note">simulated</span>{% endif %}</div>
    {% if r.result.prompt %}<div>{{ r.result.prompt }}</div>{% endif %}
    {% if r.result.error %}<div class="bad">{{ r.result.reason }}: {{ r.result.error }}</div>{% endif %}
    {% if r.result.questions %}<table><tr><th>question</th><th>tag</th><th>expected</th><th>answer</th><th>result</th></tr>
    {% for q in r.result.questions %}<tr><td>{{ q.question }}</td><td>{{ q.tag }}</td><td>{{ q.expected }}</td><td>{{ q.answer if q.answer is not none else "" }}</td>
    <td>{% if q.result == 1 %}<span class="ok">✓</span>{% elif q.result == 0 %}<span class="bad">✗</span>{% else %}<span class="unscored">unscored: {{ q.reason }}{% if q.detail %} ({{ q.detail }}){% endif %}</span>{% endif %}</td></tr>{% endfor %}</table>{% endif %}
    {% if r.sentences %}<p>{% for sent in r.sentences %}<span class="sentence" style="background: {{ colors.get(sent.label, '#eee') }}" title="{{ sent.label }}: {{ sent.get('rationale', '') }}">{{ sent.sentence }}</span> {% endfor %}</p>
    <p class="note">{% for k, c in colors.items() %}<span class="sentence" style="background: {{ c }}">{{ k }}</span> {% endfor %}</p>{% endif %}
    {% if r.result.details %}<details><summary>details</summary><pre>{{ pretty(r.result.details) }}</pre></details>{% endif %}
  </div>
</div>
{% endfor %}
</body></html>
"""


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def render_report(
    summary: JobSummary,
    results: Iterable[RowResult],
    *,
    inputs: Mapping[str, RowInput] | None = None,
    max_rows: int = 500,
    data_roots: Iterable[str] = (),
) -> str:
    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    results = list(results)
    inputs = inputs or {}
    metric_summary = dict(summary.metric_summary)
    ranking = metric_summary.pop("ranking", None)
    win_matrix = metric_summary.pop("win_matrix", None)
    win_cols = sorted(
        {c for wins in (win_matrix or {}).values() for c in wins} | set(win_matrix or {})
    )
    roots = DataRoots.of(list(data_roots)) if data_roots else None
    rows = []
    for result in results[:max_rows]:
        row_input = inputs.get(result.id)
        ref = next(iter(row_input.media.values()), None) if row_input else None
        rows.append(
            {
                "result": result,
                "thumb": thumbnail(ref, roots),
                "sentences": _find_sentences(result.details),
            }
        )
    return env.from_string(TEMPLATE).render(
        s=summary,
        rows=rows,
        total_rows=len(results),
        chart=tag_chart(summary.tag_scores, summary.tag_counts, summary.tag_ci95),
        ranking=ranking if isinstance(ranking, list) else None,
        win_matrix=win_matrix if isinstance(win_matrix, dict) else None,
        win_cols=win_cols,
        other_metric=metric_summary,
        fmt=_fmt,
        pretty=_pretty,
        cost=cost_line(summary),
        money=money,
        colors=_LABEL_COLORS,
    )
