"""Two "models" on the same prompts, for comparing candidates offline: `exact` draws what each
prompt asks for, `sloppy` the same scene with one detail wrong (a colour, a count, a position or
a shape), so a judge that looks should score `exact` higher, the gap on the missed tags."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from evalq.examples.datasets import write_rows
from evalq.examples.gecko import (
    GECKO_IMAGE_EXAMPLES,
    DrawnShape,
    draw_example,
    shapes_in_a_row,
)

IMAGES_DIR = "images"
MODELS: tuple[str, str] = ("exact", "sloppy")

# The sloppy model's drawing of each example's matching prompt, and what it got wrong.
SLOPPY: dict[str, tuple[tuple[DrawnShape, ...], str]] = {
    "red-circle": (shapes_in_a_row("blue", "circle", 0.45, 0.5), "colour"),
    "circle-left-of-square": (
        shapes_in_a_row("blue", "square", 0.3, 0.27) + shapes_in_a_row("red", "circle", 0.3, 0.73),
        "position",
    ),
    "three-yellow-triangles": (shapes_in_a_row("yellow", "triangle", 0.24, 0.3, 0.7), "count"),
    "square-above-circle": (
        shapes_in_a_row("purple", "square", 0.3, 0.5, y=0.27)
        + shapes_in_a_row("green", "circle", 0.3, 0.5, y=0.73),
        "colour",
    ),
    "two-pink-stars": (shapes_in_a_row("pink", "star", 0.28, 0.2, 0.5, 0.8), "count"),
    "triangle-below-circle": (
        shapes_in_a_row("orange", "triangle", 0.32, 0.5, y=0.27)
        + shapes_in_a_row("black", "circle", 0.28, 0.5, y=0.72),
        "position",
    ),
    "rectangle-next-to-circle": (
        shapes_in_a_row("red", "rectangle", 0.38, 0.3)
        + shapes_in_a_row("yellow", "circle", 0.26, 0.75),
        "colour",
    ),
    "white-star-blue-background": (shapes_in_a_row("white", "circle", 0.5, 0.5), "shape"),
    "circles-and-diamond": (
        shapes_in_a_row("green", "circle", 0.22, 0.3, y=0.3)
        + shapes_in_a_row("gray", "diamond", 0.3, 0.7, y=0.7),
        "count",
    ),
}


@dataclass(frozen=True)
class ComparisonExample:
    per_model: dict[str, Path]  # model -> its own dataset
    candidates: Path  # one row per prompt, one media column per model
    rows: int


def write_comparison_example(dest: Path, *, size_px: int = 256) -> ComparisonExample:
    """Write both models' images and the three datasets; paths inside are relative. One
    dataset per model (`exact.jsonl`, `sloppy.jsonl`, compared across two jobs) and one with a
    media column per model (`candidates.jsonl`, for `--candidates exact,sloppy`)."""
    images = dest / IMAGES_DIR
    images.mkdir(parents=True, exist_ok=True)
    per_model: dict[str, list[dict[str, str]]] = {m: [] for m in MODELS}
    combined: list[dict[str, str]] = []
    for example in GECKO_IMAGE_EXAMPLES:
        if example.stem not in SLOPPY:
            continue
        shapes, missed = SLOPPY[example.stem]
        drawings = {
            "exact": example,
            "sloppy": replace(example, shapes=shapes),
        }
        row: dict[str, str] = {"id": example.stem, "prompt": example.match}
        for model, drawing in drawings.items():
            ref = f"{IMAGES_DIR}/{example.stem}-{model}.png"
            draw_example(drawing, size_px).save(dest / ref, format="PNG")
            per_model[model].append({**row, "image": ref})
            row = {**row, model: ref}
        combined.append({**row, "sloppy_misses": missed})
    paths = {model: write_rows(dest / f"{model}.jsonl", rows) for model, rows in per_model.items()}
    candidates = write_rows(dest / "candidates.jsonl", combined)
    return ComparisonExample(paths, candidates, len(combined))
