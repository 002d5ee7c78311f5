"""Images as the tests make them: a drawing encoded as a file would hold it, and plain squares
of one colour."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw


def encoded(image: Image.Image, fmt: str = "PNG", **params: int) -> bytes:
    """`image` as a file of format `fmt` holds it (`params`: the encoder's, e.g. quality)."""
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **params)
    return buffer.getvalue()


def png_bytes(width: int = 64, height: int | None = None, color: str = "red") -> bytes:
    """A PNG of one colour, `width` by `height` pixels (square when `height` is not given)."""
    return encoded(Image.new("RGB", (width, width if height is None else height), color))


# A PNG's signature and no image: enough for the dataset loader, which checks the media a row
# names without reading a pixel.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


def circle_png(color: str, shift: int = 0) -> bytes:
    """A 128x128 PNG of one circle of `color` on white, `shift` pixels right of the centre (a
    near miss of the centred one)."""
    image = Image.new("RGB", (128, 128), "white")
    ImageDraw.Draw(image).ellipse((32 + shift, 32, 96 + shift, 96), fill=color)
    return encoded(image)
