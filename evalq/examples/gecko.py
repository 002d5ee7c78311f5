"""A small Gecko image dataset that evalq can score offline: as in Gecko's seed notebook, every
image appears with a prompt it matches and with a near miss, drawn as flat coloured shapes
because those are what the fake server's simulated judge can see."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from evalq.examples.datasets import MatchedPicture, write_rows

DATASET_FILE = "gecko_image.jsonl"
IMAGES_DIR = "images"
_SUPERSAMPLE = 4  # draw large and shrink, so edges are anti-aliased like real renders

RGB: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40),
    "orange": (245, 140, 30),
    "yellow": (245, 210, 30),
    "green": (40, 160, 70),
    "blue": (40, 80, 220),
    "purple": (130, 50, 170),
    "pink": (240, 110, 170),
    "brown": (130, 80, 40),
    "black": (25, 25, 25),
    "white": (250, 250, 250),
    "gray": (128, 128, 128),
}


@dataclass(frozen=True)
class DrawnShape:
    """One shape to draw; position and size are fractions of the canvas side."""

    color: str
    shape: str  # circle, oval, square, rectangle, triangle, diamond or star
    center: tuple[float, float]
    size: float  # width of the shape's bounding box


@dataclass(frozen=True)
class ExampleImage(MatchedPicture):
    shapes: tuple[DrawnShape, ...]


def shapes_in_a_row(
    color: str, shape: str, size: float, *xs: float, y: float = 0.5
) -> tuple[DrawnShape, ...]:
    """Shapes alike at each x on one line (height y): how the examples, and the comparison's
    second model, draw their scenes."""
    return tuple(DrawnShape(color, shape, (x, y), size) for x in xs)


GECKO_IMAGE_EXAMPLES: tuple[ExampleImage, ...] = (
    ExampleImage(
        "red-circle",
        shapes_in_a_row("red", "circle", 0.45, 0.5),
        match="a red circle",
        near_miss="a blue circle",
    ),
    ExampleImage(
        "circle-left-of-square",
        shapes_in_a_row("red", "circle", 0.3, 0.27) + shapes_in_a_row("blue", "square", 0.3, 0.73),
        match="a red circle to the left of a blue square",
        near_miss="a red circle to the right of a blue square",
    ),
    ExampleImage(
        "three-yellow-triangles",
        shapes_in_a_row("yellow", "triangle", 0.24, 0.2, 0.5, 0.8),
        match="three yellow triangles",
        near_miss="two yellow triangles",
    ),
    ExampleImage(
        "square-above-circle",
        shapes_in_a_row("green", "square", 0.3, 0.5, y=0.27)
        + shapes_in_a_row("purple", "circle", 0.3, 0.5, y=0.73),
        match="a green square above a purple circle",
        near_miss="a purple square above a green circle",
    ),
    ExampleImage(
        "two-pink-stars",
        shapes_in_a_row("pink", "star", 0.36, 0.28, 0.72),
        match="two pink stars",
        near_miss="three orange stars",
    ),
    ExampleImage(
        "triangle-below-circle",
        shapes_in_a_row("black", "circle", 0.28, 0.5, y=0.27)
        + shapes_in_a_row("orange", "triangle", 0.32, 0.5, y=0.72),
        match="an orange triangle below a black circle",
        near_miss="an orange triangle above a black circle",
    ),
    ExampleImage(
        "rectangle-next-to-circle",
        shapes_in_a_row("brown", "rectangle", 0.38, 0.3)
        + shapes_in_a_row("yellow", "circle", 0.26, 0.75),
        match="a brown rectangle next to a yellow circle",
        near_miss="a brown square next to a yellow circle",
    ),
    ExampleImage(
        "white-star-blue-background",
        shapes_in_a_row("white", "star", 0.5, 0.5),
        match="a white star on a blue background",
        near_miss="a white circle on a blue background",
        background="blue",
    ),
    ExampleImage(
        "circles-and-diamond",
        shapes_in_a_row("green", "circle", 0.22, 0.2, 0.5, y=0.3)
        + shapes_in_a_row("gray", "diamond", 0.3, 0.7, y=0.7),
        match="two green circles and a gray diamond",
        near_miss="two green circles and a gray square",
    ),
)


def write_gecko_image_example(dest: Path, *, size_px: int = 256) -> Path:
    """Write the example images and their match / near-miss rows; return the dataset path.

    Image paths in the rows are relative to the dataset file, so the folder can be moved.
    """
    if size_px < 64:
        raise ValueError(f"size_px must be at least 64 for the shapes to be legible, got {size_px}")
    images = dest / IMAGES_DIR
    images.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, str]] = []
    for example in GECKO_IMAGE_EXAMPLES:
        name = f"{example.stem}.png"
        draw_example(example, size_px).save(images / name, format="PNG")
        ref = f"{IMAGES_DIR}/{name}"
        rows += example.rows("image", ref)
    return write_rows(dest / DATASET_FILE, rows)


def draw_example(example: ExampleImage, size_px: int = 256) -> Image.Image:
    """Render one example; drawing is pure integer geometry, so output is byte-for-byte stable."""
    return draw_shapes(example.shapes, example.background, size_px)


def draw_shapes(shapes: Iterable[DrawnShape], background: str, size_px: int = 256) -> Image.Image:
    """The shapes on a square canvas: an example image, or one frame of a clip."""
    side = size_px * _SUPERSAMPLE
    canvas = Image.new("RGB", (side, side), RGB[background])
    draw = ImageDraw.Draw(canvas)
    for shape in shapes:
        _draw_shape(draw, shape, side)
    return canvas.reduce(_SUPERSAMPLE)


def _draw_shape(draw: ImageDraw.ImageDraw, shape: DrawnShape, side: int) -> None:
    cx, cy = shape.center[0] * side, shape.center[1] * side
    half = shape.size * side / 2
    fill = RGB[shape.color]
    if shape.shape == "circle":
        draw.ellipse(_box(cx, cy, half, half), fill=fill)
    elif shape.shape == "oval":
        draw.ellipse(_box(cx, cy, half, half * 0.6), fill=fill)
    elif shape.shape == "square":
        draw.rectangle(_box(cx, cy, half, half), fill=fill)
    elif shape.shape == "rectangle":
        draw.rectangle(_box(cx, cy, half, half * 0.5), fill=fill)
    elif shape.shape == "triangle":
        draw.polygon([(cx, cy - half), (cx + half, cy + half), (cx - half, cy + half)], fill=fill)
    elif shape.shape == "diamond":
        draw.polygon(
            [(cx, cy - half), (cx + half, cy), (cx, cy + half), (cx - half, cy)], fill=fill
        )
    elif shape.shape == "star":
        draw.polygon(_star_points(cx, cy, half), fill=fill)
    else:
        raise ValueError(f"unknown shape {shape.shape!r}")


def _box(cx: float, cy: float, half_w: float, half_h: float) -> tuple[float, float, float, float]:
    return (cx - half_w, cy - half_h, cx + half_w, cy + half_h)


def _star_points(cx: float, cy: float, radius: float) -> list[tuple[float, float]]:
    """A five-pointed star, point up; a fat inner radius keeps its arms visible when shrunk."""
    points = []
    for i in range(10):
        r = radius if i % 2 == 0 else radius * 0.45
        angle = -math.pi / 2 + i * math.pi / 5
        points.append((round(cx + r * math.cos(angle), 3), round(cy + r * math.sin(angle), 3)))
    return points
