"""The demo's own tables fit an 80-column terminal without cutting a row id or a figure; the
lines it prints for later depend on --keep."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from rich.console import Console

from devtools.local import ROOT


def demo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("evalq_demo", ROOT / "scripts" / "demo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rows_table_folds_long_ids_at_80_columns() -> None:
    rows = [
        {
            "id": "three-yellow-triangles-near-miss",
            "prompt": "two yellow triangles above a long blue rectangle on a white background",
            "status": "scored",
            "score": 0.5,
            "questions": [{"result": 1}, {"result": 0}, {"result": None}],
        }
    ]
    console = Console(width=80, record=True)
    console.print(demo().rows_table(rows))
    text = console.export_text()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    cells = "".join(line.split("│")[1].strip() for line in text.splitlines() if "│" in line)
    assert "three-yellow-triangles-near-miss" in cells
    assert "✓ ✗ ?" in text


def test_without_keep_the_lines_for_later_need_no_redis_url_and_say_how_to_keep() -> None:
    """What a run without --keep prints differently from a kept one (the kept run end to end,
    and the bare status line read from the archive: tests/integration/cli/test_demo_keep.py): its
    status line names no Redis, since the job is in the archive once the demo's private Redis
    is gone, and Flower's line says it goes with the demo and how to keep it."""
    module = demo()
    private, default = "redis://127.0.0.1:41234/0", "redis://localhost:6379/0"
    assert module.read_again(private, default, kept_running=False) == ""
    assert module.read_again(private, default, kept_running=True) == f"EVALQ_REDIS_URL={private} "
    assert module.read_again(default, default, kept_running=True) == ""
    assert module.flower_line(5555, keep=False) == (
        "flower: http://127.0.0.1:5555 (until the demo ends; `./scripts/demo --keep` keeps it)"
    )
    assert module.flower_line(5555, keep=True) == "flower: http://127.0.0.1:5555"


def test_a_plan_with_no_call_to_make_says_why_it_costs_nothing() -> None:
    from evalq.core.dry_report import DryRunReport

    cached = DryRunReport(metric="gecko-image", dataset="d", rows_total=2, rows_planned=2,
                          rows_rejected=0, calls_total=0, cost_usd=0.0)  # fmt: skip
    line = demo().dry_run_line(cached)
    assert "every answer is in the call cache" in line and "None" not in line
    fresh = cached.model_copy(update={"calls_total": 6, "price_date": "2026-11"})
    assert "6 calls" in demo().dry_run_line(fresh) and "prices of 2026-11" in demo().dry_run_line(
        fresh
    )
