"""A small Gecko video dataset that evalq can score offline: every clip with a prompt it matches
and a near miss mostly about time (the circle moves the other way, the star shrinks instead of
growing), so a judge that looked at one frame could not tell the rows apart."""

from __future__ import annotations

import io
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from evalq.examples.datasets import MatchedPicture, write_rows
from evalq.examples.gecko import DrawnShape, draw_shapes

DATASET_FILE = "gecko_video.jsonl"
VIDEOS_DIR = "videos"
FRAMES = 10
FPS = 8
JPEG_QUALITY = 90

_AVIF_HASINDEX = 0x10
_AVIIF_KEYFRAME = 0x10


@dataclass(frozen=True)
class Track:
    """One shape over the clip: it moves in a straight line and may grow or shrink.

    Positions and sizes are fractions of the frame side, as in evalq.examples.gecko."""

    color: str
    shape: str
    start: tuple[float, float]
    end: tuple[float, float] | None = None  # None: it stays where it is
    size: float = 0.3
    end_size: float | None = None  # None: it keeps its size

    def at(self, t: float) -> DrawnShape:
        end = self.end or self.start
        end_size = self.size if self.end_size is None else self.end_size
        x = self.start[0] + (end[0] - self.start[0]) * t
        y = self.start[1] + (end[1] - self.start[1]) * t
        return DrawnShape(self.color, self.shape, (x, y), self.size + (end_size - self.size) * t)


@dataclass(frozen=True)
class ExampleClip(MatchedPicture):
    tracks: tuple[Track, ...]


GECKO_VIDEO_EXAMPLES: tuple[ExampleClip, ...] = (
    ExampleClip(
        "red-circle-left-to-right",
        (Track("red", "circle", (0.2, 0.5), (0.8, 0.5)),),
        match="a red circle moving from left to right",
        near_miss="a red circle moving from right to left",
    ),
    ExampleClip(
        "blue-square-top-to-bottom",
        (Track("blue", "square", (0.5, 0.2), (0.5, 0.8), size=0.28),),
        match="a blue square moving from top to bottom",
        near_miss="a blue square moving from bottom to top",
    ),
    ExampleClip(
        "green-triangle-still",
        (Track("green", "triangle", (0.5, 0.5), size=0.4),),
        match="a green triangle that stays still",
        near_miss="a green triangle moving from left to right",
    ),
    ExampleClip(
        "yellow-star-growing",
        (Track("yellow", "star", (0.5, 0.5), size=0.25, end_size=0.6),),
        match="a yellow star growing",
        near_miss="a yellow star shrinking",
    ),
    ExampleClip(
        "purple-circle-above-square",
        (
            Track("purple", "circle", (0.18, 0.25), (0.82, 0.25), size=0.22),
            Track("orange", "square", (0.5, 0.75), size=0.26),
        ),
        match="a purple circle moving from left to right above an orange square",
        near_miss="a purple circle moving from left to right below an orange square",
    ),
    ExampleClip(
        "two-pink-circles-right-to-left",
        (
            Track("pink", "circle", (0.8, 0.27), (0.2, 0.27), size=0.22),
            Track("pink", "circle", (0.8, 0.73), (0.2, 0.73), size=0.22),
        ),
        match="two pink circles moving from right to left",
        near_miss="three pink circles moving from right to left",
    ),
)


def clip_frames(clip: ExampleClip, frames: int = FRAMES, size_px: int = 128) -> list[Image.Image]:
    """The clip's frames, first to last (t runs from 0 to 1)."""
    out = []
    for i in range(frames):
        t = i / (frames - 1) if frames > 1 else 0.0
        out.append(draw_shapes([track.at(t) for track in clip.tracks], clip.background, size_px))
    return out


def jpeg(image: Image.Image, quality: int = JPEG_QUALITY) -> bytes:
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def _chunk(fourcc: bytes, data: bytes) -> bytes:
    pad = b"\0" if len(data) % 2 else b""
    return fourcc + struct.pack("<I", len(data)) + data + pad


def _list(kind: bytes, payload: bytes) -> bytes:
    return b"LIST" + struct.pack("<I", len(payload) + 4) + kind + payload


def mjpeg_avi(frames: Sequence[bytes], width: int, height: int, fps: int = FPS) -> bytes:
    """An AVI file holding JPEG frames (Motion JPEG), with the index players expect: no codec
    library is needed to write it, the fake judge reads its frames with Pillow alone, real
    Gemini accepts video/avi, and the bytes are stable for a given Pillow."""
    if not frames:
        raise ValueError("a video needs at least one frame")
    biggest = max(len(f) for f in frames)
    avih = struct.pack(
        "<10I4I",
        round(1_000_000 / fps),  # microseconds per frame
        biggest * fps,  # max bytes per second
        0,
        _AVIF_HASINDEX,
        len(frames),
        0,
        1,  # streams
        biggest,
        width,
        height,
        0,
        0,
        0,
        0,
    )
    strh = (
        b"vids"
        + b"MJPG"
        + struct.pack(
            "<IHHIIIIIIiIhhhh",
            0,
            0,
            0,
            0,
            1,
            fps,
            0,
            len(frames),
            biggest,
            -1,
            0,
            0,
            0,
            width,
            height,
        )
    )
    strf = struct.pack(
        "<IiiHH4sIiiII", 40, width, height, 1, 24, b"MJPG", width * height * 3, 0, 0, 0, 0
    )
    header = _list(
        b"hdrl",
        _chunk(b"avih", avih) + _list(b"strl", _chunk(b"strh", strh) + _chunk(b"strf", strf)),
    )
    movi = b""
    index = b""
    for frame in frames:
        index += b"00dc" + struct.pack("<III", _AVIIF_KEYFRAME, 4 + len(movi), len(frame))
        movi += _chunk(b"00dc", frame)
    body = b"AVI " + header + _list(b"movi", movi) + _chunk(b"idx1", index)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def clip_bytes(clip: ExampleClip, frames: int = FRAMES, size_px: int = 128) -> bytes:
    """The clip as an MJPEG AVI file."""
    images = clip_frames(clip, frames, size_px)
    return mjpeg_avi([jpeg(image) for image in images], size_px, size_px)


def write_gecko_video_example(dest: Path) -> Path:
    """Write the example clips and their match / near-miss rows; return the dataset path.

    Video paths in the rows are relative to the dataset file, so the folder can be moved."""
    videos = dest / VIDEOS_DIR
    videos.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, str]] = []
    for clip in GECKO_VIDEO_EXAMPLES:
        name = f"{clip.stem}.avi"
        (videos / name).write_bytes(clip_bytes(clip))
        ref = f"{VIDEOS_DIR}/{name}"
        rows += clip.rows("video", ref)
    return write_rows(dest / DATASET_FILE, rows)
