"""Every metric's HTML report and a comparison report per metric, rendered from real jobs and
captured in headless Chromium, cropped to the parts the manual shows (docs/screenshots/), so a
reader sees what a user reads at a size the text can be read."""

from __future__ import annotations

import argparse
import html as html_lib
import json
import math
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalq.client import Client
from evalq.client.compare import compare_jobs
from evalq.client.output.html.comparison import media_lookup, render_comparison
from evalq.client.output.html.report import render_report
from evalq.core.registry import metric_names
from evalq.examples.datasets import write_rows

WINDOW_PX = (1200, 1800)


@dataclass(frozen=True)
class Run:
    """One metric's example: the dataset, the options, and a second dataset to compare with."""

    metric: str
    dataset: Path
    other: Path
    options: dict[str, Any]


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _altered(path: Path, change: Callable[[dict[str, Any]], dict[str, Any]]) -> Path:
    """The dataset beside `path` with each row changed (the other side of a comparison)."""
    return write_rows(path.with_name("other-" + path.name), [change(dict(r)) for r in _rows(path)])


def _shorter(row: dict[str, Any], *fields: str) -> dict[str, Any]:
    """A weaker answer: each field cut to its first sentence."""
    for name in fields:
        if isinstance(row.get(name), str):
            row[name] = row[name].split(". ")[0].rstrip(".") + "."
    return row


OFF_TOPIC_ID = "off-topic"


def _with_off_topic_row(path: Path) -> Path:
    """The groundedness example plus a row whose response quotes its context but answers
    another question: ineligible, so not grounded whatever its sentences' labels say."""
    rows = _rows(path)
    source = next(r for r in rows if r.get("response"))
    first = str(source["context"]).split(". ")[0].replace("\n", " ") + "."
    off_topic = {
        "id": OFF_TOPIC_ID,
        "query": "Which planet has the most moons, and how many?",
        "context": source["context"],
        "response": first,
    }
    return write_rows(path, [off_topic, *rows])  # first, so the screenshot shows it


def example_runs(folder: Path) -> list[Run]:
    """Every metric's example dataset and its altered twin, written under `folder`."""
    from evalq.examples.comparison import write_comparison_example
    from evalq.examples.grounding import write_groundedness_example
    from evalq.examples.ratings import (
        write_pairwise_example,
        write_pointwise_example,
        write_rank_example,
    )
    from evalq.examples.text_rubrics import write_rubric_example
    from evalq.examples.video import write_gecko_video_example

    images = write_comparison_example(folder / "image")
    video = write_gecko_video_example(folder / "video")
    grounding = _with_off_topic_row(write_groundedness_example(folder / "grounding"))
    pointwise = write_pointwise_example(folder / "pointwise")
    pairwise = write_pairwise_example(folder / "pairwise")
    rank = write_rank_example(folder / "rank")
    rubric = write_rubric_example(folder / "rubric")
    swap = {"response_a": "response_b", "response_b": "response_a"}
    return [
        Run("gecko-image", images.per_model["exact"], images.per_model["sloppy"], {}),
        Run("gecko-video", video, video, {}),
        Run("groundedness", grounding, _altered(grounding, lambda r: _shorter(r, "response")), {}),
        Run(
            "pointwise",
            pointwise,
            _altered(pointwise, lambda r: _shorter(r, "response")),
            {"template": "summarization_quality"},
        ),
        Run(
            "pairwise",
            pairwise,
            _altered(pairwise, lambda r: {swap.get(k, k): v for k, v in r.items()}),
            {},
        ),
        Run(
            "rank",
            rank,
            _altered(rank, lambda r: _shorter(r, "cited")),
            {"candidates": ["terse", "moderate", "cited"]},
        ),
        Run(
            "rubric",
            rubric,
            _altered(rubric, lambda r: _shorter(r, "careful")),
            {"candidates": ["careful", "careless"]},
        ),
    ]


@dataclass(frozen=True)
class Rendered:
    metric: str
    report: Path
    compare: Path
    jobs: tuple[str, str]


def run_and_render(
    client: Client, runs: list[Run], out: Path, judge_prefix: str = "screens"
) -> list[Rendered]:
    """Submit both jobs of every run, wait for them, and write report-METRIC.html and
    compare-METRIC.html into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    submitted = [
        (
            run,
            client.submit(
                run.metric, run.dataset, judge_model=f"{judge_prefix}-a", options=run.options
            ).job_id,
            client.submit(
                run.metric, run.other, judge_model=f"{judge_prefix}-b", options=run.options
            ).job_id,
        )
        for run in runs
    ]
    rendered = []
    for run, job_a, job_b in submitted:
        for job in (job_a, job_b):
            client.wait(job, timeout_s=600)
        report = out / f"{run.metric}.html"
        report.write_text(
            render_report(
                client.summary(job_a),
                client.results(job_a),
                inputs=client.inputs(job_a),
                data_roots=client.data_roots(job_a),
                config=client.config(job_a),
            ),
            encoding="utf-8",
        )
        rendered.append(
            Rendered(
                run.metric,
                report,
                write_comparison(client, job_a, job_b, run.metric, out),
                (job_a, job_b),
            )
        )
    return rendered


def write_comparison(client: Client, job_a: str, job_b: str, metric: str, out: Path) -> Path:
    """compare --html of two jobs, as the command writes it."""
    sides = [f"{metric}-a={job_a}", f"{metric}-b={job_b}"]
    comparison = compare_jobs(client, sides)
    labels = {s.label: s for s in comparison.sides}
    html = render_comparison(
        comparison,
        media_of=media_lookup(
            {label: client.inputs(s.job_id, s.candidate) for label, s in labels.items()},
            {label: s.candidate for label, s in labels.items()},
        ),
        inputs={label: client.inputs(s.job_id, s.candidate) for label, s in labels.items()},
        data_roots={label: client.data_roots(s.job_id) for label, s in labels.items()},
        summaries={label: client.summary(s.job_id) for label, s in labels.items()},
        configs={label: client.config(s.job_id) for label, s in labels.items()},
    )
    path = out / f"compare-{metric}.html"
    path.write_text(html, encoding="utf-8")
    return path


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError(
            "Debian's chromium is not installed (scripts/install-system-deps installs it)"
        )
    return found


def chromium_args(profile: Path) -> list[str]:
    """Headless and offline: no network, no profile shared with another run."""
    return [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
    ]


def run_chromium(
    html: Path,
    *flags: str,
    size: tuple[int, int] = WINDOW_PX,
    profile: Path | None = None,
    timeout_s: float = 180,
) -> str:
    """Chromium on `html` at `size` (width, height) with `flags`; what it printed. Its profile
    is `profile` when the caller keeps one, otherwise a fresh one removed after the run."""
    with tempfile.TemporaryDirectory(prefix="evalq-chrome-") as fresh:
        done = subprocess.run(
            [
                *chromium_args(profile or Path(fresh)),
                *flags,
                f"--window-size={size[0]},{size[1]}",
                html.as_uri(),
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    return done.stdout


def screenshot(
    html: Path,
    png: Path,
    size: tuple[int, int] = WINDOW_PX,
    *,
    profile: Path | None = None,
    timeout_s: float = 180,
) -> None:
    run_chromium(html, f"--screenshot={png}", size=size, profile=profile, timeout_s=timeout_s)


def dump_dom(html: Path) -> str:
    """The page's DOM after its scripts ran (the layout check writes its findings into it)."""
    return run_chromium(html, "--dump-dom")


# Run in a copy of a page: opens every <details>, then lists each element that reaches past
# the right edge of its row card, each chart label outside its chart (or a page wider than the
# window) into <pre id=layout-check>.
LAYOUT_CHECK = """<script>
for (const d of document.querySelectorAll('details')) d.open = true;
const bad = [];
if (document.documentElement.scrollWidth > window.innerWidth + 1) bad.push('page wider than the window');
for (const card of document.querySelectorAll('.card')) {
  const edge = card.getBoundingClientRect().right;
  for (const el of card.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > edge + 1) bad.push(el.tagName + ' ' + Math.round(r.right - edge) + 'px past ' + (card.dataset.row || 'a card'));
  }
}
for (const chart of document.querySelectorAll('svg.chart')) {
  const box = chart.getBoundingClientRect();
  for (const t of chart.querySelectorAll('text')) {
    const r = t.getBoundingClientRect();
    if (r.left < box.left - 1 || r.right > box.right + 1) bad.push('chart text "' + t.textContent + '" outside its chart');
  }
}
const out = document.createElement('pre');
out.id = 'layout-check';
out.textContent = 'overflowing: ' + bad.length + (bad.length ? '\\n' + bad.slice(0, 20).join('\\n') : '');
document.body.appendChild(out);
</script>"""


def layout_problems(html: Path) -> list[str]:
    """What reaches past its card or chart in `html` as Chromium lays it out at WINDOW_PX
    (empty: all fits)."""
    probe = html.with_name(html.stem + ".layout-check.html")
    probe.write_text(
        html.read_text(encoding="utf-8").replace("</body>", LAYOUT_CHECK + "</body>"),
        encoding="utf-8",
    )
    dom = dump_dom(probe)
    start = dom.find('<pre id="layout-check">')
    if start < 0:
        raise AssertionError(f"the layout check did not run in {html}")
    text = dom[start:].split(">", 1)[1].split("</pre>", 1)[0]
    head, _, rest = text.partition("\n")
    return [] if head.strip() == "overflowing: 0" else [head, *rest.splitlines()]


# The manual's content column is about 700-800 CSS pixels wide: a page laid out at this width and
# captured at twice its pixels keeps the report's text size, crisp, when the manual shows it.
PAGE_WIDTH = 800
SCALE = 2
MARGIN = 8  # CSS pixels kept around what a crop shows (less than the gap between row cards)


@dataclass(frozen=True)
class Crop:
    """A part of a page, as wide as the page's body: from the top of the first element `start`
    selects to the bottom of the first one `end` selects. `suffix` names its PNG."""

    suffix: str
    start: str
    end: str
    needed: bool = True  # False: a page without it (a metric without tags) has no such image
    unless: str = ""  # a page with an element this selects gets no such image


REPORT_CROPS = (
    Crop("summary", "h1", "body > table"),
    Crop("row", ".card.row", ".card.row"),
    Crop("tags", "#per-tag-scores", "table.tags", needed=False),
    # A metric without tags shows its figures instead: "Metric figures" (the heading followed
    # by a table's title and table) down to its last table
    Crop(
        "figures",
        "h2:has(+ h3 + table.figures)",
        "table.figures:not(:has(~ table.figures))",
        needed=False,
        unless="#per-tag-scores",
    ),
)
# A comparison's title, sides, figures and per-tag chart: down to the element followed by the
# rows' heading and the first row card (or the note that no row is paired).
COMPARE_CROPS = (Crop("", "h1", "body > :has(+ h3 + :is(.card, p.note))"),)


@dataclass(frozen=True)
class Rect:
    """A box on the page, in CSS pixels from the page's top left corner."""

    left: float
    top: float
    right: float
    bottom: float


def crop_box(
    rect: Rect, image_size: tuple[int, int], scale: float = SCALE, margin: float = MARGIN
) -> tuple[int, int, int, int]:
    """The pixels of a capture taken at `scale` that show `rect` with `margin` CSS pixels
    around it, clamped to the image: (left, upper, right, lower) as Pillow crops."""
    width, height = image_size
    box = (
        max(0, math.floor((rect.left - margin) * scale)),
        max(0, math.floor((rect.top - margin) * scale)),
        min(width, math.ceil((rect.right + margin) * scale)),
        min(height, math.ceil((rect.bottom + margin) * scale)),
    )
    if box[2] <= box[0] or box[3] <= box[1]:
        raise ValueError(f"{rect} is outside a {width}x{height} capture at scale {scale}")
    return box


# Run in a copy of a page once it has loaded (images laid out): the page's width and each crop's
# box, as JSON in <pre id=crop-rects>.
MEASURE = """<script>
addEventListener('load', () => {
  const page = document.documentElement, body = document.body.getBoundingClientRect();
  const rects = {};
  for (const [name, start, end, unless] of CROPS) {
    if (unless && document.querySelector(unless)) continue;
    const a = document.querySelector(start), b = document.querySelector(end);
    if (!a || !b) continue;
    const top = a.getBoundingClientRect().top + scrollY;
    const bottom = b.getBoundingClientRect().bottom + scrollY;
    rects[name] = [body.left, top, body.right, bottom];
  }
  const out = document.createElement('pre');
  out.id = 'crop-rects';
  out.textContent = JSON.stringify({width: page.scrollWidth, rects: rects});
  document.body.appendChild(out);
});
</script>"""


def measure(html: Path, crops: tuple[Crop, ...]) -> dict[str, Rect]:
    """Where each crop is on `html` laid out PAGE_WIDTH wide (a crop whose elements are missing
    is left out)."""
    script = MEASURE.replace(
        "CROPS", json.dumps([[c.suffix, c.start, c.end, c.unless] for c in crops])
    )
    probe = html.with_name(html.stem + ".measure.html")
    probe.write_text(
        html.read_text(encoding="utf-8").replace("</body>", script + "</body>"), encoding="utf-8"
    )
    dom = run_chromium(probe, "--dump-dom", "--hide-scrollbars", size=(PAGE_WIDTH, WINDOW_PX[1]))
    start = dom.find('<pre id="crop-rects">')
    if start < 0:
        raise AssertionError(f"the measuring script did not run in {html}")
    found = json.loads(html_lib.unescape(dom[start:].split(">", 1)[1].split("</pre>", 1)[0]))
    if found["width"] > PAGE_WIDTH:
        raise AssertionError(f"{html} is {found['width']} px wide, wider than {PAGE_WIDTH}")
    return {name: Rect(*box) for name, box in found["rects"].items()}


def capture(html: Path, crops: tuple[Crop, ...], stem: Path) -> list[Path]:
    """Crop `html`'s parts into STEM-SUFFIX.png (STEM.png for an empty suffix) from one capture
    tall enough to hold them all, taken at SCALE without scrollbars; the PNGs written."""
    from PIL import Image

    rects = measure(html, crops)
    missing = [c.start for c in crops if c.needed and c.suffix not in rects]
    if missing:
        raise AssertionError(f"{html} has no {', '.join(missing)}")
    size = (
        PAGE_WIDTH,
        max(WINDOW_PX[1], math.ceil(max(r.bottom for r in rects.values()) + 2 * MARGIN)),
    )
    written = []
    with tempfile.TemporaryDirectory(prefix="evalq-capture-") as scratch:
        shot = Path(scratch) / "page.png"
        run_chromium(
            html,
            f"--screenshot={shot}",
            "--hide-scrollbars",
            f"--force-device-scale-factor={SCALE}",
            size=size,
        )
        with Image.open(shot) as image:
            if image.size != (size[0] * SCALE, size[1] * SCALE):
                raise AssertionError(f"Chromium captured {image.size}, not {size} at {SCALE}x")
            page = image.convert("RGB")
        for crop in crops:
            if crop.suffix in rects:
                png = stem.with_name(
                    stem.name + (f"-{crop.suffix}" if crop.suffix else "") + ".png"
                )
                part = page.crop(crop_box(rects[crop.suffix], page.size))
                # 256 colours undithered: text, tables and charts look the same at half the bytes
                part.quantize(256, dither=Image.Dither.NONE).save(png, optimize=True)
                written.append(png)
    return written


HELP = """Every metric's HTML report and a comparison report per metric, rendered from real jobs (real
Redis, a real worker, the fake Gemini server's simulated judge), captured in headless Chromium
and cropped into docs/screenshots/, so a person can look at what a user reads:

    python -m devtools.screenshots [--out docs/screenshots]

Each report gives METRIC-summary.png (title and summary table), METRIC-row.png (the first row)
and METRIC-tags.png (the per-tag chart and table) or, for a metric without tags,
METRIC-figures.png (its metric figures); each comparison gives compare-METRIC.png (down to the
first row). Pages are laid out 800 CSS pixels wide and captured at twice the pixels.

The jobs are the examples in evalq.examples; the comparison of each metric is the example
against a second job whose responses (or images) are changed, so the two sides differ. The
integration test tests/integration/reports/test_reports_browser.py runs the same jobs and checks the
rendered DOM.
"""


def main() -> int:
    from devtools.local import WorkerPool, evalq_env, start_fake_gemini, start_redis, stop
    from evalq.worker.settings import Settings

    parser = argparse.ArgumentParser(
        description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    parser.add_argument("--html-dir", type=Path, default=None, help="keep the HTML pages here")
    parser.add_argument(
        "--only", action="append", choices=metric_names(), help="these metrics only"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="evalq-screens-"))
    server = start_redis(work / "redis")
    fake = start_fake_gemini()
    pool = WorkerPool(evalq_env(server.url, fake.url), work / "logs")
    try:
        pool.start(name="screens")
        client = Client(Settings(redis_url=server.url, gemini_base_url=fake.url, api_key=None))
        runs = [r for r in example_runs(work / "data") if not args.only or r.metric in args.only]
        html_dir = args.html_dir or work / "html"
        args.out.mkdir(parents=True, exist_ok=True)
        for done in run_and_render(client, runs, html_dir):
            written = capture(done.report, REPORT_CROPS, args.out / done.metric)
            written += capture(done.compare, COMPARE_CROPS, args.out / f"compare-{done.metric}")
            print(f"{done.metric}: {', '.join(str(p) for p in written)}")
    finally:
        pool.stop_all()
        stop(fake.proc)
        if server.proc is not None:
            stop(server.proc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
