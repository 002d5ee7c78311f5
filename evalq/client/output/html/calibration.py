"""A calibration as a small self-contained HTML page (autoescaped: setup names, row ids and
notes are the user's text)."""

from __future__ import annotations

from evalq.client.output import calibration_text as said
from evalq.client.output.formats import SIMULATED_BANNER, p_text
from evalq.client.output.html.page import render_page
from evalq.core.human.calibration import Calibration, counts_text

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>evalq calibrate: {{ r.human }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.banner { background: #fff3cd; padding: 8px; font-weight: bold; }
.sig { font-weight: bold; }
</style></head><body>
<h1>Which judge setup agrees with the raters?</h1>
{% if r.simulated %}<p class="banner">{{ banner }}</p>{% endif %}
<p>{{ headline }}</p>
<h2>Agreement</h2>
<table><tr><th>setup</th><th>Spearman</th><th>Kendall tau-b</th><th>pairwise accuracy</th>
<th>rows used</th><th>left out</th><th>pairs</th><th>cost/row</th></tr>
{% for s in r.setups %}<tr><td>{{ s.name }} <small>({{ s.job_id }})</small></td>
<td>{{ est(s.spearman) }}</td><td>{{ est(s.kendall) }}</td><td>{{ est(s.pairwise) }}</td>
<td>{{ s.used }}/{{ s.rows }}</td><td>{{ counts(s.left_out) }}</td><td>{{ s.pairwise.n }}</td>
<td>{{ cost(s) }}</td></tr>
{% endfor %}</table>
{% if left %}<h3>Rows left out</h3><ul>{% for line in left %}<li>{{ line }}</li>{% endfor %}</ul>{% endif %}
{% if r.differences %}<h2>Paired differences: Spearman A - B</h2>
<p>On the rows both setups scored; bootstrap over rows; Holm's correction over
{{ r.differences | length }} pair(s); bold: significant at 0.05 after it.</p>
<table><tr><th>A</th><th>B</th><th>rows</th><th>difference [95% CI]</th><th>p</th>
<th>p Holm</th></tr>
{% for d in r.differences %}<tr{% if d.significant %} class="sig"{% endif %}><td>{{ d.a }}</td>
<td>{{ d.b }}</td><td>{{ d.difference.n }}</td><td>{{ diff(d.difference) }}</td>
<td>{{ p(d.p_value) }}</td><td>{{ p(d.p_holm) }}</td></tr>
{% endfor %}</table>{% endif %}
{% if notes %}<h3>Notes</h3><ul>{% for line in notes %}<li>{{ line }}</li>{% endfor %}</ul>{% endif %}
{% for line in verdict %}<p><strong>{{ line }}</strong></p>{% endfor %}
</body></html>
"""


# What the page formats its figures with.
_HELPERS = {
    "banner": SIMULATED_BANNER,
    "est": said.estimate_text,
    "diff": said.difference_text,
    "p": p_text,
    "cost": said.cost_per_row_text,
    "counts": counts_text,
}


def render_calibration_html(result: Calibration) -> str:
    return render_page(
        _PAGE,
        _HELPERS,
        r=result,
        headline=said.headline(result),
        left=said.left_out_lines(result),
        notes=said.note_lines(result),
        verdict=said.verdict_lines(result),
    )


__all__ = ["render_calibration_html"]
