"""Synthetic shape images and a dataset of them: rows pairing each image with a prompt that
matches it or misses its color. Shared by the integration tests that need real media rows."""

from __future__ import annotations

import functools
import io
from pathlib import Path
from typing import Any

from PIL import Image

from tests.support.datasets import write_rows

COLORS = [
    "red",
    "green",
    "blue",
    "yellow",
    "purple",
    "orange",
    "black",
    "white",
    "pink",
    "brown",
    "gray",
]
SHAPES = ["circle", "square", "triangle"]


def shape_image(path: Path, color: str, shape: str) -> Path:
    path.write_bytes(shape_png(color, shape))
    return path


@functools.cache
def shape_png(color: str, shape: str) -> bytes:
    """Drawn once per process: a dataset names the same few images on many rows."""
    from PIL import ImageDraw

    image = Image.new("RGB", (128, 128), "white" if color != "white" else "black")
    draw = ImageDraw.Draw(image)
    box = (32, 32, 96, 96)
    if shape == "circle":
        draw.ellipse(box, fill=color)
    elif shape == "square":
        draw.rectangle(box, fill=color)
    else:
        draw.polygon([(64, 28), (100, 96), (28, 96)], fill=color)
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def shapes_dataset(folder: Path, rows: int, *, own_questions: bool = False) -> Path:
    """Rows pairing synthetic shape images with matching or mismatching prompts."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(rows):
        color, shape = COLORS[i % len(COLORS)], SHAPES[(i // len(COLORS)) % len(SHAPES)]
        image = shape_image(folder / f"{color}-{shape}.png", color, shape)
        said_color = color if i % 3 else COLORS[(i + 1) % len(COLORS)]
        row: dict[str, Any] = {
            "id": f"row{i:04d}",
            "prompt": f"a {said_color} {shape} #{i}",
            "image": image.name,
        }
        if own_questions:  # distinct questions, so no two calls share a cache key
            row["questions"] = [
                {"question": f"Is there a {shape}? (check {i})", "answer": "yes", "tag": "object"},
                {
                    "question": f"Is the {shape} {said_color}? (check {i})",
                    "answer": "yes",
                    "tag": "color",
                },
                {"question": f"Is there a star? (check {i})", "answer": "no", "tag": "object"},
            ]
        out.append(row)
    path = folder / "data.jsonl"
    write_rows(path, out)
    return path
