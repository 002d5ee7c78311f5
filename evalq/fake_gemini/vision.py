"""A tiny, honest "vision model" for flat synthetic images of coloured shapes: the simulated
judge's answers must depend on the pixels, and this sees exactly what the example dataset
draws and nothing more; anything it can't see is absent."""

from __future__ import annotations

import colorsys
import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image

PALETTE: tuple[str, ...] = (
    "red",
    "orange",
    "yellow",
    "green",
    "blue",
    "purple",
    "pink",
    "brown",
    "black",
    "white",
    "gray",
)
SHAPES: tuple[str, ...] = ("circle", "oval", "square", "rectangle", "triangle", "diamond", "star")
RELATIONS: tuple[str, ...] = (
    "left of",
    "right of",
    "above",
    "below",
    "next to",
    "inside",
    "larger than",
    "smaller than",
)
LOCATIONS: tuple[str, ...] = ("left", "right", "top", "bottom", "center")
SIZES: tuple[str, ...] = ("small", "large")

DEFAULT_MAX_SIDE = 96
_MAX_SOURCE_PIXELS = 50_000_000  # decoding more would stall the fake server for seconds
_BACKGROUND = 0  # pixel label for background; palette colours are 1 + their PALETTE index
_BG_TOLERANCE = 40  # max per-channel distance from the border colour still counted as background
_MIN_AREA_FRACTION = 0.002  # blobs smaller than this share of the image are specks
_MIN_PIXELS = 8
_MIN_CORE_FRACTION = 0.2  # thin rings (anti-aliasing fringes) have almost no interior pixels


@dataclass(frozen=True)
class Blob:
    """One connected region of a single palette colour, in analysed-image coordinates."""

    color: str
    shape: str
    centroid: tuple[float, float]  # (x, y) as fractions of width and height; y grows downwards
    bbox: tuple[int, int, int, int]  # left, top, right, bottom (right/bottom exclusive), pixels
    box: tuple[float, float, float, float]  # the bbox as fractions of width and height
    area: float  # share of the image's pixels
    pixels: int

    def position(self) -> str:
        """A coarse place name, so explanations read like a person describing the image."""
        x, y = self.centroid
        col = "left" if x < 1 / 3 else "right" if x > 2 / 3 else "center"
        row = "top" if y < 1 / 3 else "bottom" if y > 2 / 3 else "middle"
        return f"{row} {col}" if (row, col) != ("middle", "center") else "center"

    def describe(self) -> str:
        article = "an" if self.color[0] in "aeiou" else "a"
        return f"{article} {self.color} {self.shape} ({self.position()})"


@dataclass(frozen=True)
class Scene:
    """What the vision model saw: the background colour and the blobs, left to right."""

    width: int
    height: int
    background: str | None
    blobs: tuple[Blob, ...]
    undecodable: bool = False
    note: str = ""

    @classmethod
    def empty(cls, note: str, *, undecodable: bool = False) -> Scene:
        """A scene with nothing in it, for inputs the model cannot look at."""
        return cls(0, 0, None, (), undecodable=undecodable, note=note)

    def describe(self) -> str:
        """One sentence listing what was seen, used verbatim in verdict explanations."""
        if self.width == 0:
            return f"I could not look at an image ({self.note})."
        things = ", ".join(blob.describe() for blob in self.blobs) or "no shapes"
        return f"I see {things} on a {self.background} background."


def analyse(data: bytes, *, max_side: int = DEFAULT_MAX_SIDE) -> Scene:
    """Decode image bytes and analyse them; bad bytes give an empty, flagged scene, not an error."""
    try:
        with Image.open(io.BytesIO(data)) as opened:
            if opened.width * opened.height > _MAX_SOURCE_PIXELS:
                return Scene.empty("image too large to analyse", undecodable=True)
            opened.draft("RGB", (max_side * 2, max_side * 2))  # cheap JPEG downscale on decode
            opened.load()  # decode now, inside the guard: Image.open only reads the header
            image = _flatten(opened)
    # PIL signals corrupt input with many unrelated exception types (OSError, SyntaxError,
    # ValueError, struct.error, DecompressionBombError...); the judge must answer regardless.
    except Exception as exc:
        return Scene.empty(f"undecodable image: {type(exc).__name__}", undecodable=True)
    return analyse_image(image, max_side=max_side)


def analyse_image(image: Image.Image, *, max_side: int = DEFAULT_MAX_SIDE) -> Scene:
    """Analyse an image already in memory, so callers holding one need not re-encode it."""
    small = _downscale(_flatten(image), max_side)
    width, height = small.size
    labels, background = _label_pixels(small)
    blobs = [
        _describe_region(region, width, height)
        for region in _regions(labels, width, height)
        if _is_object(region, width * height)
    ]
    blobs.sort(key=lambda blob: (blob.centroid[0], blob.centroid[1]))  # read left to right
    return Scene(width, height, background, tuple(blobs))


def classify_color(rgb: Sequence[int]) -> str:
    """Name a colour by hue, splitting light reds into pink and dark oranges into brown.

    Hue bands are used rather than RGB distance to reference colours because they keep dark and
    light variants of a colour together (navy is blue, not black), which is how people name them.
    """
    r, g, b = (channel / 255 for channel in rgb[:3])
    hue, saturation, value = colorsys.rgb_to_hsv(r, g, b)
    degrees = hue * 360
    if value < 0.2:
        return "black"
    if saturation < 0.2 or (value < 0.35 and saturation < 0.35):
        return "white" if value > 0.85 else "gray"
    if degrees < 15 or degrees >= 345:
        return "pink" if saturation < 0.55 and value > 0.7 else "red"
    if degrees < 45:
        return "brown" if value < 0.65 or saturation < 0.5 else "orange"
    if degrees < 70:
        return "yellow"
    if degrees < 165:
        return "green"
    if degrees < 255:
        return "blue"
    if degrees < 295:
        return "purple"
    return "pink" if value >= 0.75 else "purple"


def relation_holds(relation: str, a: Blob, b: Blob) -> bool:
    """Whether ``a <relation> b`` holds; the dominant axis decides, so diagonals count once."""
    dx = b.centroid[0] - a.centroid[0]
    dy = b.centroid[1] - a.centroid[1]
    if relation == "left of":
        return dx > 0.03 and dx >= 0.5 * abs(dy)
    if relation == "right of":
        return -dx > 0.03 and -dx >= 0.5 * abs(dy)
    if relation == "above":
        return dy > 0.03 and dy >= 0.5 * abs(dx)
    if relation == "below":
        return -dy > 0.03 and -dy >= 0.5 * abs(dx)
    if relation == "next to":
        return abs(dx) >= abs(dy) and _gap(a, b) <= 0.3
    if relation == "inside":
        return _contains(b.box, a.box) and a.pixels < b.pixels
    if relation == "larger than":
        return a.pixels > 1.2 * b.pixels
    if relation == "smaller than":
        return b.pixels > 1.2 * a.pixels
    return False


def location_holds(location: str, blob: Blob) -> bool:
    """Absolute placement in the frame, judged on the blob's centroid."""
    x, y = blob.centroid
    if location == "left":
        return x < 0.4
    if location == "right":
        return x > 0.6
    if location == "top":
        return y < 0.4
    if location == "bottom":
        return y > 0.6
    if location == "center":
        return abs(x - 0.5) < 0.15 and abs(y - 0.5) < 0.15
    return False


def size_of(blob: Blob) -> str:
    """Small, large or medium, from the blob's longest side relative to the image's."""
    left, top, right, bottom = blob.box
    share = max(right - left, bottom - top)
    if share < 0.25:
        return "small"
    if share > 0.45:
        return "large"
    return "medium"


# ---- decoding -------------------------------------------------------------------------------


def _flatten(image: Image.Image) -> Image.Image:
    """RGB with any transparency composited onto white, as a viewer would show it."""
    if image.mode == "RGB":
        return image
    if image.mode in ("RGBA", "LA", "PA", "RGBa", "La") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        canvas = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        canvas.alpha_composite(rgba)
        return canvas.convert("RGB")
    return image.convert("RGB")


def _downscale(image: Image.Image, max_side: int) -> Image.Image:
    """Shrink with box averaging: it keeps shapes solid, and the fringes it blends are dropped."""
    width, height = image.size
    longest = max(width, height)
    if longest <= max_side:
        return image
    scale = max_side / longest
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return image.resize(size, Image.Resampling.BOX)


# ---- pixel labelling ------------------------------------------------------------------------


def _label_pixels(image: Image.Image) -> tuple[list[int], str]:
    """Label each pixel 0 (background) or 1 + palette index, caching per 5-bit colour bucket."""
    raw = image.tobytes()
    keys = [
        ((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3)
        for r, g, b in zip(raw[0::3], raw[1::3], raw[2::3], strict=True)
    ]
    width, height = image.size
    background_key = Counter(_border(keys, width, height)).most_common(1)[0][0]
    background_rgb = _bucket_rgb(background_key)
    cache: dict[int, int] = {}
    labels = []
    for key in keys:
        label = cache.get(key)
        if label is None:
            label = _label_for(_bucket_rgb(key), background_rgb)
            cache[key] = label
        labels.append(label)
    return labels, classify_color(background_rgb)


def _border(values: list[int], width: int, height: int) -> list[int]:
    """The image's outermost ring of values, where the plain background shows."""
    top = values[:width]
    bottom = values[(height - 1) * width :]
    sides = [values[y * width + x] for y in range(1, height - 1) for x in (0, width - 1)]
    return top + bottom + sides


def _bucket_rgb(key: int) -> tuple[int, int, int]:
    return (((key >> 10) & 31) << 3) + 4, (((key >> 5) & 31) << 3) + 4, ((key & 31) << 3) + 4


def _label_for(rgb: tuple[int, int, int], background: tuple[int, int, int]) -> int:
    if max(abs(c - d) for c, d in zip(rgb, background, strict=True)) <= _BG_TOLERANCE:
        return _BACKGROUND
    return 1 + PALETTE.index(classify_color(rgb))


# ---- connected regions ----------------------------------------------------------------------


@dataclass
class _Region:
    label: int
    pixels: list[int]
    core: int  # pixels whose four neighbours share the label


def _regions(labels: list[int], width: int, height: int) -> list[_Region]:
    """4-connected same-label regions, found by an explicit-stack flood fill (no recursion)."""
    size = width * height
    seen = [False] * size
    regions: list[_Region] = []
    for start in range(size):
        label = labels[start]
        if label == _BACKGROUND or seen[start]:
            continue
        seen[start] = True
        stack = [start]
        pixels: list[int] = []
        core = 0
        while stack:
            p = stack.pop()
            pixels.append(p)
            x = p % width
            same = 0
            for q, inside in ((p - 1, x > 0), (p + 1, x < width - 1), (p - width, p >= width)):
                if inside and labels[q] == label:
                    same += 1
                    if not seen[q]:
                        seen[q] = True
                        stack.append(q)
            q = p + width
            if q < size and labels[q] == label:
                same += 1
                if not seen[q]:
                    seen[q] = True
                    stack.append(q)
            core += same == 4
        regions.append(_Region(label, pixels, core))
    return regions


def _is_object(region: _Region, image_pixels: int) -> bool:
    """Reject specks and the thin fringes box-downscaling leaves around anti-aliased edges."""
    count = len(region.pixels)
    if count < max(_MIN_PIXELS, _MIN_AREA_FRACTION * image_pixels):
        return False
    return region.core >= max(1.0, _MIN_CORE_FRACTION * count)


# ---- geometry -------------------------------------------------------------------------------


def _describe_region(region: _Region, width: int, height: int) -> Blob:
    rows: dict[int, list[int]] = {}
    sum_x = sum_y = 0
    for p in region.pixels:
        y, x = divmod(p, width)
        sum_x += x
        sum_y += y
        extent = rows.get(y)
        if extent is None:
            rows[y] = [x, x]
        elif x < extent[0]:
            extent[0] = x
        elif x > extent[1]:
            extent[1] = x
    count = len(region.pixels)
    left = min(e[0] for e in rows.values())
    right = max(e[1] for e in rows.values()) + 1
    top, bottom = min(rows), max(rows) + 1
    mean_x, mean_y = sum_x / count + 0.5, sum_y / count + 0.5
    bbox = (left, top, right, bottom)
    filled = count + _hole_pixels(region.pixels, rows, width)
    shape = _classify_shape(rows, filled, bbox, (mean_x, mean_y))
    return Blob(
        color=PALETTE[region.label - 1],
        shape=shape,
        centroid=(mean_x / width, mean_y / height),
        bbox=bbox,
        box=(left / width, top / height, right / width, bottom / height),
        area=count / (width * height),
        pixels=count,
    )


def _hole_pixels(pixels: list[int], rows: dict[int, list[int]], width: int) -> int:
    """Pixels enclosed by the region both across and down: a frame around another shape.

    Counting them as part of the shape keeps a square with a circle drawn inside it a square
    (and lets "inside" be checked); a star's notches are open on one axis, so they stay out.
    """
    members = set(pixels)
    columns: dict[int, list[int]] = {}
    for p in pixels:
        y, x = divmod(p, width)
        extent = columns.setdefault(x, [y, y])
        extent[0], extent[1] = min(extent[0], y), max(extent[1], y)
    holes = 0
    for y, (lo, hi) in rows.items():
        for x in range(lo + 1, hi):
            if y * width + x not in members and columns[x][0] < y < columns[x][1]:
                holes += 1
    return holes


def _classify_shape(
    rows: dict[int, list[int]],
    filled: int,
    bbox: tuple[int, int, int, int],
    mean: tuple[float, float],
) -> str:
    """Name the shape from solidity (concavity), bounding-box fill, aspect and mass balance.

    Fill ratios of ideal shapes are distinct: rectangle 1, ellipse pi/4, triangle and diamond
    1/2; a star is the only concave shape we know. A triangle's centroid sits a third of the way
    from its base, while a diamond's is centred, which separates the two half-filled shapes.
    """
    left, top, right, bottom = bbox
    box_w, box_h = right - left, bottom - top
    solidity = filled / max(_hull_area(rows), 1.0)
    fill = filled / (box_w * box_h)
    aspect = box_w / box_h
    squarish = 0.8 <= aspect <= 1.25
    if solidity < 0.8:
        return "star"
    if fill >= 0.88:
        return "square" if squarish else "rectangle"
    if fill >= 0.66:
        return "circle" if squarish else "oval"
    off_x = abs((mean[0] - left) / box_w - 0.5)
    off_y = abs((mean[1] - top) / box_h - 0.5)
    return "triangle" if max(off_x, off_y) > 0.08 else "diamond"


def _hull_area(rows: dict[int, list[int]]) -> float:
    """Area of the convex hull of the region's pixel squares (monotone chain + shoelace)."""
    points = sorted(
        {(x, y + dy) for y, (lo, hi) in rows.items() for x in (lo, hi + 1) for dy in (0, 1)}
    )
    if len(points) < 3:
        return 0.0
    hull = _half_hull(points) + _half_hull(points[::-1])
    area = 0
    for (x1, y1), (x2, y2) in zip(hull, hull[1:] + hull[:1], strict=True):
        area += x1 * y2 - x2 * y1
    return abs(area) / 2


def _half_hull(points: list[tuple[int, int]]) -> list[tuple[int, int]]:
    chain: list[tuple[int, int]] = []
    for point in points:
        while len(chain) >= 2 and _cross(chain[-2], chain[-1], point) <= 0:
            chain.pop()
        chain.append(point)
    return chain[:-1]


def _cross(o: tuple[int, int], a: tuple[int, int], b: tuple[int, int]) -> int:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _gap(a: Blob, b: Blob) -> float:
    """Distance between two bounding boxes as a fraction of the image (0 when they touch)."""
    ax0, ay0, ax1, ay1 = a.box
    bx0, by0, bx1, by1 = b.box
    return max(bx0 - ax1, ax0 - bx1, by0 - ay1, ay0 - by1, 0.0)


def _contains(
    outer: tuple[float, float, float, float], inner: tuple[float, float, float, float]
) -> bool:
    return (
        outer[0] <= inner[0]
        and outer[1] <= inner[1]
        and inner[2] <= outer[2]
        and inner[3] <= outer[3]
    )
