"""Watching a video: the JPEG frames of a Motion-JPEG AVI, decoded with Pillow (no codec
library needed), and the scenes of its first, middle and last frames as the image judge's
vision sees them."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from evalq.fake_gemini.protocol import FakeMedia, FakeRequest, SeesImages
from evalq.fake_gemini.vision import Scene

_MAX_FRAMES = 10_000


def avi_frames(data: bytes) -> list[bytes]:
    """The JPEG frames of a Motion-JPEG AVI, in order; [] for anything else (never raises)."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"AVI ":
        return []
    frames: list[bytes] = []
    _walk(data, 12, min(len(data), 8 + struct.unpack_from("<I", data, 4)[0]), frames, False)
    return frames


def _walk(data: bytes, start: int, end: int, frames: list[bytes], in_movi: bool) -> None:
    pos = start
    while pos + 8 <= end and len(frames) < _MAX_FRAMES:
        fourcc = data[pos : pos + 4]
        size = struct.unpack_from("<I", data, pos + 4)[0]
        body_end = min(pos + 8 + size, end)
        if fourcc == b"LIST" and pos + 12 <= end:
            kind = data[pos + 8 : pos + 12]
            _walk(data, pos + 12, body_end, frames, in_movi or kind == b"movi")
        elif in_movi and fourcc[2:] == b"dc" and data[pos + 8 : pos + 10] == b"\xff\xd8":
            frames.append(data[pos + 8 : body_end])
        pos += 8 + size + (size & 1)


def video_frames(media: list[FakeMedia]) -> tuple[list[bytes], str]:
    """The first attached video's frames, or [] and why it could not be watched."""
    video = next((m for m in media if m.mime_type.lower().startswith("video/")), None)
    if video is None:
        sent = ", ".join(m.mime_type for m in media) or "nothing"
        return [], f"no video was attached (got {sent})"
    if video.data is None:
        return [], f"the video was sent by reference ({video.uri}), which I cannot open"
    frames = avi_frames(video.data)
    if not frames:
        return [], f"I cannot decode this {video.mime_type} (I only read Motion-JPEG AVI)"
    return frames, ""


@dataclass(frozen=True)
class Footage:
    """What the judge saw of a video: scenes of its first, middle and last frames."""

    scenes: tuple[Scene, ...]
    note: str = ""

    @property
    def first(self) -> Scene:
        return self.scenes[0]

    @property
    def last(self) -> Scene:
        return self.scenes[-1]

    def describe(self) -> str:
        if not self.scenes:
            return f"I could not watch the video ({self.note})."
        start = self.first.describe().removeprefix("I see ").rstrip(".")
        end = self.last.describe().removeprefix("I see ").rstrip(".")
        return f"At the start I see {start}; at the end I see {end}."


def watch(request: FakeRequest, judge: SeesImages) -> Footage:
    frames, why = video_frames(request.media)
    if not frames:
        return Footage((), why)
    picked = sorted({0, len(frames) // 2, len(frames) - 1})
    scenes = tuple(judge.scene_for([FakeMedia("image/jpeg", data=frames[i])]) for i in picked)
    if all(scene.width == 0 for scene in scenes):
        return Footage((), "its frames do not decode")
    return Footage(scenes)
