"""The simulated judge's eyes: it must see what the example images and simple drawings show."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

import pytest
from PIL import Image, ImageDraw

from evalq.examples.gecko import GECKO_IMAGE_EXAMPLES, ExampleImage, draw_example
from evalq.fake_gemini.vision import (
    PALETTE,
    Blob,
    Scene,
    analyse,
    analyse_image,
    classify_color,
    location_holds,
    relation_holds,
    size_of,
)
from tests.support.images import encoded

Painter = Callable[[ImageDraw.ImageDraw], None]


def _drawing(paint: Painter, size: int = 200, background: str = "white") -> Image.Image:
    image = Image.new("RGB", (size, size), background)
    paint(ImageDraw.Draw(image))
    return image


def _kinds(scene: Scene) -> Counter[tuple[str, str]]:
    return Counter((blob.color, blob.shape) for blob in scene.blobs)


def _only(scene: Scene, color: str, shape: str) -> Blob:
    matches = [b for b in scene.blobs if (b.color, b.shape) == (color, shape)]
    assert len(matches) == 1, scene.describe()
    return matches[0]


@pytest.mark.parametrize("example", GECKO_IMAGE_EXAMPLES, ids=lambda e: e.stem)
def test_sees_every_example_image(example: ExampleImage) -> None:
    scene = analyse(encoded(draw_example(example)))
    expected = Counter((shape.color, shape.shape) for shape in example.shapes)
    assert _kinds(scene) == expected, scene.describe()
    assert scene.background == example.background
    assert not scene.undecodable


@pytest.mark.parametrize("example", GECKO_IMAGE_EXAMPLES, ids=lambda e: e.stem)
def test_example_positions_match_the_drawing(example: ExampleImage) -> None:
    scene = analyse(encoded(draw_example(example)))
    drawn = sorted(example.shapes, key=lambda s: s.center)
    seen = sorted(scene.blobs, key=lambda b: b.centroid)
    for shape, blob in zip(drawn, seen, strict=True):
        left, top, right, bottom = blob.box
        assert blob.color == shape.color
        assert ((left + right) / 2, (top + bottom) / 2) == pytest.approx(shape.center, abs=0.03)


def test_example_relations() -> None:
    by_stem = {e.stem: analyse_image(draw_example(e)) for e in GECKO_IMAGE_EXAMPLES}
    scene = by_stem["circle-left-of-square"]
    circle, square = _only(scene, "red", "circle"), _only(scene, "blue", "square")
    assert relation_holds("left of", circle, square)
    assert relation_holds("right of", square, circle)
    assert relation_holds("next to", circle, square)
    assert not relation_holds("right of", circle, square)
    assert not relation_holds("above", circle, square)
    scene = by_stem["square-above-circle"]
    square, circle = _only(scene, "green", "square"), _only(scene, "purple", "circle")
    assert relation_holds("above", square, circle)
    assert relation_holds("below", circle, square)
    assert not relation_holds("left of", square, circle)
    assert not relation_holds("next to", square, circle)


def test_hand_drawn_shapes() -> None:
    def paint(d: ImageDraw.ImageDraw) -> None:
        d.ellipse((10, 10, 60, 60), fill=(255, 0, 0))  # circle
        d.rectangle((80, 10, 130, 60), fill=(0, 0, 255))  # square
        d.rectangle((145, 20, 195, 45), fill=(0, 128, 0))  # rectangle
        d.polygon([(10, 140), (60, 140), (35, 95)], fill=(255, 165, 0))  # triangle, point up
        d.polygon([(80, 100), (130, 100), (105, 145)], fill=(128, 0, 128))  # triangle, point down
        d.polygon([(145, 120), (170, 95), (195, 120), (170, 145)], fill=(64, 64, 64))  # diamond
        d.ellipse((20, 160, 90, 190), fill=(255, 105, 180))  # oval
        d.polygon([(150, 155), (195, 175), (150, 195)], fill=(139, 69, 19))  # triangle, sideways

    scene = analyse(encoded(_drawing(paint)))
    assert _kinds(scene) == Counter(
        {
            ("red", "circle"): 1,
            ("blue", "square"): 1,
            ("green", "rectangle"): 1,
            ("orange", "triangle"): 1,
            ("purple", "triangle"): 1,
            ("gray", "diamond"): 1,
            ("pink", "oval"): 1,
            ("brown", "triangle"): 1,
        }
    ), scene.describe()


def test_specks_are_ignored_and_counts_are_exact() -> None:
    def paint(d: ImageDraw.ImageDraw) -> None:
        for x in (20, 80, 140):
            d.rectangle((x, 70, x + 40, 110), fill=(240, 200, 0))
        for x in range(5, 195, 23):
            d.point((x, 10), fill=(0, 0, 0))
            d.rectangle((x, 185, x + 1, 186), fill=(255, 0, 0))

    scene = analyse(encoded(_drawing(paint)))
    assert _kinds(scene) == Counter({("yellow", "square"): 3}), scene.describe()


def test_star_and_nested_shapes() -> None:
    star = [(100, 20), (119, 74), (176, 75), (131, 110), (147, 165)]
    star += [(100, 132), (53, 165), (69, 110), (24, 75), (81, 74)]

    def paint(d: ImageDraw.ImageDraw) -> None:
        d.polygon(star, fill=(250, 250, 250))

    scene = analyse(encoded(_drawing(paint, background="navy")))
    assert _kinds(scene) == Counter({("white", "star"): 1})
    assert scene.background == "blue"

    def nested(d: ImageDraw.ImageDraw) -> None:
        d.rectangle((40, 40, 160, 160), fill=(30, 60, 200))
        d.ellipse((80, 80, 120, 120), fill=(220, 30, 30))

    scene = analyse(encoded(_drawing(nested)))
    square, circle = _only(scene, "blue", "square"), _only(scene, "red", "circle")
    assert relation_holds("inside", circle, square)
    assert not relation_holds("inside", square, circle)
    assert relation_holds("larger than", square, circle)
    assert relation_holds("smaller than", circle, square)


def test_survives_lossy_and_unusual_encodings() -> None:
    def paint(d: ImageDraw.ImageDraw) -> None:
        d.ellipse((20, 70, 80, 130), fill=(200, 30, 30))
        d.rectangle((120, 70, 180, 130), fill=(30, 60, 200))

    image = _drawing(paint)
    expected = Counter({("red", "circle"): 1, ("blue", "square"): 1})
    for data in (
        encoded(image, "JPEG", quality=70),
        encoded(image.convert("P"), "GIF"),
        encoded(image.resize((1200, 1200)), "PNG"),
        encoded(image, "WEBP", quality=80),
    ):
        assert _kinds(analyse(data)) == expected


def test_transparency_is_flattened_onto_white() -> None:
    image = Image.new("RGBA", (120, 120), (0, 0, 0, 0))
    ImageDraw.Draw(image).ellipse((30, 30, 90, 90), fill=(0, 160, 60, 255))
    scene = analyse(encoded(image))
    assert scene.background == "white"
    assert _kinds(scene) == Counter({("green", "circle"): 1})


def test_locations_and_sizes() -> None:
    def paint(d: ImageDraw.ImageDraw) -> None:
        d.ellipse((5, 5, 35, 35), fill="red")  # small, top left
        d.rectangle((100, 100, 195, 195), fill="blue")  # large, bottom right

    scene = analyse(encoded(_drawing(paint)))
    circle, square = _only(scene, "red", "circle"), _only(scene, "blue", "square")
    assert location_holds("left", circle) and location_holds("top", circle)
    assert location_holds("right", square) and location_holds("bottom", square)
    assert not location_holds("center", circle)
    assert (size_of(circle), size_of(square)) == ("small", "large")


@pytest.mark.parametrize(
    ("rgb", "name"),
    [
        ((220, 40, 40), "red"),
        ((128, 0, 0), "red"),
        ((255, 165, 0), "orange"),
        ((255, 215, 0), "yellow"),
        ((34, 139, 34), "green"),
        ((0, 0, 128), "blue"),
        ((0, 255, 255), "blue"),
        ((128, 0, 128), "purple"),
        ((147, 112, 219), "purple"),
        ((255, 192, 203), "pink"),
        ((255, 20, 147), "pink"),
        ((139, 69, 19), "brown"),
        ((10, 10, 10), "black"),
        ((255, 255, 255), "white"),
        ((128, 128, 128), "gray"),
        ((64, 64, 64), "gray"),
    ],
)
def test_colour_names(rgb: tuple[int, int, int], name: str) -> None:
    assert classify_color(rgb) == name
    assert name in PALETTE


@pytest.mark.parametrize(
    "data",
    [b"", b"not an image at all", b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, b"GIF89a\x01"],
)
def test_undecodable_bytes_give_an_empty_flagged_scene(data: bytes) -> None:
    scene = analyse(data)
    assert scene.undecodable
    assert scene.blobs == ()
    assert "could not" in scene.describe()


def test_truncated_png_is_undecodable() -> None:
    data = encoded(draw_example(GECKO_IMAGE_EXAMPLES[0]))
    assert analyse(data[: len(data) // 2]).undecodable


def test_plain_image_has_no_blobs() -> None:
    scene = analyse(encoded(Image.new("RGB", (64, 64), "gray")))
    assert scene.blobs == () and scene.background == "gray" and not scene.undecodable


def test_analysis_is_fast_and_deterministic() -> None:
    data = encoded(draw_example(GECKO_IMAGE_EXAMPLES[-1], size_px=256))
    first = analyse(data)
    timings = []
    for _ in range(5):
        start = time.perf_counter()
        assert analyse(data) == first
        timings.append(time.perf_counter() - start)
    assert min(timings) < 0.05
