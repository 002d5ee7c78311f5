"""The demo's own tables fit an 80-column terminal without cutting a row id or a figure."""

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
