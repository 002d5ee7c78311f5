"""``scripts/bench --adaptive``: adaptive repeats (``--samples auto``) against a fixed eight
samples, on a judge made noisy on purpose, scored against 32 samples."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from statistics import fmean
from typing import Any

from devtools.bench.common import Stack, bench_parser, this_machine

# (kind, share of rows, odds): most easy, some split, some near 50/50.
MIX = (
    ("easy", 0.70, "4=0.97 5=0.03"),
    ("split", 0.20, "4=0.8 5=0.2"),
    ("coin", 0.10, "4=0.55 5=0.45"),
)
METHODS = (("fixed 8", 8), ("auto (max 8)", "auto"), ("fixed 32", 32))
REFERENCE = "fixed 32"


def kinds(rows: int) -> list[str]:
    """Each row's kind, in the MIX's shares (the last kind takes what rounding leaves)."""
    out: list[str] = []
    for kind, share, _ in MIX[:-1]:
        out += [kind] * round(rows * share)
    return (out + [MIX[-1][0]] * rows)[:rows]


def noisy_dataset(folder: Path, rows: int) -> Path:
    """Pointwise rows, each response carrying its kind's odds and a seed of its own."""
    folder.mkdir(parents=True, exist_ok=True)
    odds = {kind: text for kind, _, text in MIX}
    lines = [
        json.dumps(
            {
                "id": f"{kind}-{i}",
                "prompt": f"Summarise item {i}.",
                "response": f"Item {i} summary. [judge-odds {odds[kind]} seed={i}]",
                "kind": kind,
            }
        )
        for i, kind in enumerate(kinds(rows))
    ]
    path = folder / "noisy.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def leading(answers: list[str]) -> str | None:
    """The one most common answer; None when two tie for it."""
    ranked = Counter(answers).most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def verdicts(stack: Stack, path: Path, samples: int | str) -> tuple[dict[str, Any], float]:
    """Each row's verdict (None: undecided), samples taken and leading answer, by row id; and
    the job's wall time."""
    start = time.monotonic()
    job = stack.client.submit(
        "pointwise",
        path,
        judge_model="bench-noisy-judge",
        use_cache=False,
        options={"template": "fluency", "samples": samples},
    ).job_id
    stack.client.wait(job, timeout_s=3600, poll_s=0.2)
    wall_s = time.monotonic() - start
    out: dict[str, Any] = {}
    for row in stack.client.results(job):
        if not row.repeats:
            raise SystemExit(f"job {job} row {row.id} has no repeats: adaptive repeats missing")
        unit = row.repeats[0]
        answers = [s.answer for s in unit.samples if s.answer is not None]
        out[row.id] = (unit.verdict if unit.decided else None, len(unit.samples), leading(answers))
    return out, wall_s


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    path = noisy_dataset(work / "data", args.rows)
    stack = Stack(work, ["--latency-ms", str(args.latency_ms)], 1, args.concurrency)
    try:
        runs = {name: verdicts(stack, path, samples) for name, samples in METHODS}
    finally:
        stack.close()
    reference = runs[REFERENCE][0]
    by_kind = dict(zip(reference, kinds(args.rows), strict=True))
    methods: dict[str, Any] = {}
    for name, (got, wall_s) in runs.items():
        agree = {row: got[row][0] == reference[row][0] for row in reference}
        same_lead = [got[row][2] == reference[row][2] for row in reference]
        methods[name] = {
            "calls_per_unit": round(fmean(n for _, n, _ in got.values()), 2),
            "agreement_with_32": round(fmean(agree.values()), 4),
            "leading_answer_agreement_with_32": round(fmean(same_lead), 4),
            "calls_per_unit_by_kind": {
                kind: round(fmean(got[row][1] for row in got if by_kind[row] == kind), 2)
                for kind, _, _ in MIX
            },
            "agreement_by_kind": {
                kind: round(fmean(a for row, a in agree.items() if by_kind[row] == kind), 4)
                for kind, _, _ in MIX
            },
            "undecided": sum(v is None for v, _, _ in got.values()),
            "wall_s": round(wall_s, 1),
        }
    fixed, auto = methods["fixed 8"], methods["auto (max 8)"]
    return {
        "date": datetime.now(UTC).date().isoformat(),
        "rows": args.rows,
        "mix": {kind: {"share": share, "odds": odds} for kind, share, odds in MIX},
        "latency_ms": args.latency_ms,
        "methods": methods,
        "auto_calls_fewer_than_fixed_8": round(fixed["calls_per_unit"] / auto["calls_per_unit"], 2),
        "machine": this_machine(),
    }


def report(results: dict[str, Any]) -> None:
    mix = ", ".join(f"{k} {v['share']:.0%} [{v['odds']}]" for k, v in results["mix"].items())
    print(f"\nadaptive repeats, {results['rows']} pointwise rows ({mix}), {results['date']}")
    print(
        f"{'method':<14} {'calls/unit':>10} {'agree w/ 32':>12} {'same lead':>10} "
        f"{'undecided':>9}  agreement by kind"
    )
    for name, m in results["methods"].items():
        kinds_text = ", ".join(f"{k} {v:.1%}" for k, v in m["agreement_by_kind"].items())
        print(
            f"{name:<14} {m['calls_per_unit']:>10.2f} {m['agreement_with_32']:>12.1%} "
            f"{m['leading_answer_agreement_with_32']:>10.1%} {m['undecided']:>9}  {kinds_text}"
        )
    print(
        f"auto asks {results['auto_calls_fewer_than_fixed_8']}x fewer calls than 8 samples "
        "(goal >= 3x, with >= 95% agreement with 32 samples)"
    )


HELP = """``scripts/bench --adaptive``: adaptive repeats (``--samples auto``) against a fixed
eight samples, on a judge made noisy on purpose.

The dataset is pointwise rows whose responses carry their own odds for the fake server's
noisy simulated judge (``[judge-odds 4=0.97 5=0.03 seed=N]``): most rows easy (the judge
gives one rating 97% of the time), some split (80/20), some near a coin flip (55/45), each
row drawing its own samples. Three jobs on one stack, the call cache off: ``--samples 8``,
``--samples auto`` (at most 8) and ``--samples 32``, the reference. Reported per method: the
judge calls per unit (each sample is one call), and the share of units whose verdict is the
32-sample one (a verdict left undecided agrees only with an undecided reference), and the
share whose leading answer (the most common of its samples) is the reference's. Goal: auto
at least 3x fewer calls than 8 samples, with at least 95% agreement with the reference.
"""


def main(argv: list[str]) -> int:
    parser = bench_parser(
        HELP, prog="scripts/bench --adaptive", latency_ms=0, concurrency=16,
        out="bench-adaptive.json",
    )  # fmt: skip
    parser.add_argument("--rows", type=int, default=200)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="evalq-adaptive-") as tmp:
        results = measure(args, Path(tmp))
    report(results)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0
