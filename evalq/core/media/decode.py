"""Whether media bytes really decode, checked before they are sent to a judge: a judge shown
garbage behind a right signature sees nothing, so such media is an input_error, never a verdict."""

from __future__ import annotations

import io
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Iterator

FFPROBE_TIMEOUT_S = 30.0

# Which Pillow decoders may open each type, so a file is never decoded as something else.
_PILLOW_FORMATS: dict[str, tuple[str, ...]] = {
    "image/png": ("PNG",),
    "image/jpeg": ("JPEG",),
    "image/gif": ("GIF",),
    "image/bmp": ("BMP", "DIB"),
    "image/webp": ("WEBP",),
    "image/avif": ("AVIF",),
}
_PILLOW_FEATURES = {"image/webp": "webp", "image/avif": "avif"}


def decode_problem(data: bytes, mime: str) -> str | None:
    """What is wrong with the bytes as that type, or None when they decode."""
    if mime.startswith("image/"):
        return image_problem(data, mime)
    if mime.startswith("video/"):
        return video_problem(data, mime)
    return None


def image_problem(data: bytes, mime: str) -> str | None:
    from PIL import Image, UnidentifiedImageError, features  # Pillow only where an image is read

    formats = _PILLOW_FORMATS.get(mime)
    feature = _PILLOW_FEATURES.get(mime)
    if formats is None or (feature is not None and not features.check(feature)):
        # No decoder here (HEIC, or a Pillow built without it): the container must hold up.
        return _iso_problem(data, need=("meta",)) if data[4:8] == b"ftyp" else None
    try:
        with Image.open(io.BytesIO(data), formats=list(formats)) as image:
            width, height = image.size
            if width * height > (Image.MAX_IMAGE_PIXELS or 0) > 0:
                return f"is {width}x{height} pixels, more than evalq decodes"
            image.verify()
        with Image.open(io.BytesIO(data), formats=list(formats)) as image:
            image.load()
    except (UnidentifiedImageError, Image.DecompressionBombError) as exc:
        return f"does not decode as {mime} ({exc})"
    except (OSError, SyntaxError, ValueError, EOFError, IndexError, struct.error) as exc:
        return f"does not decode as {mime} ({type(exc).__name__}: {exc})"
    return None


def video_problem(data: bytes, mime: str) -> str | None:
    """A structural check of the container (RIFF/AVI chunks with a frame, decoded when Motion
    JPEG; ISO boxes for MP4, MOV and 3GP; WebM's EBML header and segment), and ffprobe's verdict
    when it is on PATH."""
    if data[:4] == b"RIFF" and data[8:12] == b"AVI ":
        problem = _avi_problem(data)
    elif data[4:8] == b"ftyp":
        problem = _iso_problem(data, need=("moov", "mdat"))
    elif data[:4] == b"\x1a\x45\xdf\xa3":
        problem = _ebml_problem(data)
    else:
        problem = None  # MPEG, FLV, WMV: the signature is all we check without ffprobe
    if problem is None:
        problem = _ffprobe_problem(data)
    return None if problem is None else f"does not decode as {mime} ({problem})"


# ---- AVI (RIFF) ---------------------------------------------------------------------------

_MJPEG = (b"MJPG", b"AVRN", b"LJPG", b"JPGL")  # Motion JPEG: each frame is a JPEG image


def _chunks(data: bytes, start: int, end: int) -> Iterator[tuple[bytes, int, int]]:
    """(fourcc, payload start, payload end) of the RIFF chunks in data[start:end]."""
    at = start
    while at + 8 <= end:
        fourcc = data[at : at + 4]
        (size,) = struct.unpack_from("<I", data, at + 4)
        body = at + 8
        if body + size > end:
            raise ValueError(f"chunk {fourcc!r} runs past the end of the file (truncated)")
        yield fourcc, body, body + size
        at = body + size + (size & 1)


def _avi_problem(data: bytes) -> str | None:
    (riff_size,) = struct.unpack_from("<I", data, 4)
    if 8 + riff_size > len(data):
        return f"its RIFF header announces {8 + riff_size} bytes, the file has {len(data)}"
    try:
        header, frame, compression = False, None, b""
        for fourcc, start, end in _chunks(data, 12, 8 + riff_size):
            kind = data[start : start + 4] if fourcc == b"LIST" else b""
            if kind == b"hdrl":
                header = True
                compression = _avi_compression(data, start + 4, end)
            elif kind == b"movi":
                frame = _first_frame(data, start + 4, end)
    except (ValueError, struct.error) as exc:
        return str(exc)
    if not header:
        return "no AVI header (hdrl)"
    if frame is None:
        return "no video frame in its movi list"
    jpeg = compression.upper() in _MJPEG or frame[:3] == b"\xff\xd8\xff"
    if jpeg and (problem := image_problem(frame, "image/jpeg")) is not None:
        return f"its first frame {problem.removeprefix('does not decode as image/jpeg ')}"
    return None


def _avi_compression(data: bytes, start: int, end: int) -> bytes:
    """The video stream's codec, from strh's handler or strf's compression field."""
    for fourcc, s, e in _chunks(data, start, end):
        if fourcc == b"LIST" and data[s : s + 4] == b"strl":
            handler = b""
            for inner, a, b in _chunks(data, s + 4, e):
                if inner == b"strh" and data[a : a + 4] == b"vids":
                    handler = data[a + 4 : a + 8]
                elif inner == b"strf" and handler and b - a >= 20:
                    return data[a + 16 : a + 20]
            if handler:
                return handler
    return b""


def _first_frame(data: bytes, start: int, end: int) -> bytes | None:
    """The first non-empty video chunk (##dc or ##db), inside rec lists too."""
    for fourcc, s, e in _chunks(data, start, end):
        if fourcc == b"LIST" and data[s : s + 4] == b"rec ":
            if (frame := _first_frame(data, s + 4, e)) is not None:
                return frame
        elif fourcc[2:4] in (b"dc", b"db") and e > s:
            return data[s:e]
    return None


# ---- ISO base media (MP4, MOV, 3GP, HEIF) -------------------------------------------------


def _boxes(data: bytes, start: int, end: int) -> Iterator[tuple[bytes, int, int]]:
    """(type, payload start, payload end) of the boxes in data[start:end]."""
    at = start
    while at + 8 <= end:
        size, kind = struct.unpack_from(">I4s", data, at)
        header = 8
        if size == 1:
            if at + 16 > end:
                raise ValueError(f"box {kind!r} is cut short (truncated)")
            (size,) = struct.unpack_from(">Q", data, at + 8)
            header = 16
        elif size == 0:
            size = end - at  # to the end of the file
        if size < header or at + size > end:
            raise ValueError(f"box {kind!r} runs past the end of the file (truncated)")
        yield kind, at + header, at + size
        at += size
    if data[at:end].strip(b"\0"):
        raise ValueError("a box is cut short at the end of the file (truncated)")


def _iso_problem(data: bytes, need: tuple[str, ...]) -> str | None:
    try:
        boxes = {kind.decode("latin-1"): (s, e) for kind, s, e in _boxes(data, 0, len(data))}
    except (ValueError, struct.error) as exc:
        return str(exc)
    missing = [
        name for name in need if name not in boxes and not (name == "mdat" and "moof" in boxes)
    ]
    if missing:
        return f"no {' or '.join(missing)} box"
    if "moov" in boxes:
        start, end = boxes["moov"]
        try:
            inner = {kind for kind, _, _ in _boxes(data, start, end)}
        except (ValueError, struct.error) as exc:
            return f"moov: {exc}"
        if b"trak" not in inner:
            return "no track in its moov box"
    return None


# ---- EBML (WebM, Matroska) ----------------------------------------------------------------

_EBML, _DOCTYPE, _SEGMENT = 0x1A45DFA3, 0x4282, 0x18538067
_TRACKS, _CLUSTER = 0x1654AE6B, 0x1F43B675


def _vint(data: bytes, at: int, *, keep_marker: bool) -> tuple[int, int, bool]:
    """(value, length, all value bits set) of the variable-length integer at data[at]."""
    if at >= len(data):
        raise ValueError("cut short (truncated)")
    first = data[at]
    length = 1
    while length <= 8 and not first & (0x80 >> (length - 1)):
        length += 1
    if length > 8 or at + length > len(data):
        raise ValueError("bad or cut short element header")
    value = first if keep_marker else first & (0xFF >> length)
    for byte in data[at + 1 : at + length]:
        value = (value << 8) | byte
    unknown = not keep_marker and value == (1 << (7 * length)) - 1
    return value, length, unknown


def _element(data: bytes, at: int) -> tuple[int, int, int | None]:
    """(id, payload start, payload end or None for an unknown size) of the element at data[at]."""
    element_id, id_len, _ = _vint(data, at, keep_marker=True)
    size, size_len, unknown = _vint(data, at + id_len, keep_marker=False)
    start = at + id_len + size_len
    return element_id, start, None if unknown else start + size


def _ebml_problem(data: bytes) -> str | None:
    try:
        element_id, start, end = _element(data, 0)
        if element_id != _EBML or end is None or end > len(data):
            return "bad EBML header"
        doctype = None
        at = start
        while at < end:
            child, s, e = _element(data, at)
            if e is None or e > end:
                return "bad EBML header"
            if child == _DOCTYPE:
                doctype = data[s:e].rstrip(b"\0")
            at = e
        if doctype not in (b"webm", b"matroska"):
            return f"EBML document type {doctype!r} is not webm or matroska"
        element_id, start, segment_end = _element(data, end)
        if element_id != _SEGMENT:
            return "no Segment after the EBML header"
        if segment_end is not None and segment_end > len(data):
            return "its Segment runs past the end of the file (truncated)"
        limit = len(data) if segment_end is None else segment_end
        at = start
        while at < limit:
            child, s, e = _element(data, at)
            if child == _TRACKS:
                return None if e is None or e <= limit else "its Tracks run past the end"
            if child == _CLUSTER or e is None:
                break
            if e > limit:
                return "an element runs past the end of the file (truncated)"
            at = e
        return "no Tracks before the first Cluster"
    except ValueError as exc:
        return str(exc)


# ---- ffprobe, when installed --------------------------------------------------------------


def _ffprobe_problem(data: bytes) -> str | None:
    """ffprobe's verdict on the first video frame, or None (also when it is not installed)."""
    ffprobe = shutil.which("ffprobe")
    if ffprobe is None:
        return None
    with tempfile.NamedTemporaryFile(suffix=".media") as file:
        file.write(data)
        file.flush()
        command = [
            ffprobe,
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-count_frames",
            "-read_intervals",
            "%+#1",
            "-show_entries",
            "stream=nb_read_frames",
            "-of",
            "default=noprint_wrappers=1:nokey=1",
            file.name,
        ]
        try:
            done = subprocess.run(
                command, capture_output=True, timeout=FFPROBE_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            return f"ffprobe did not finish in {FFPROBE_TIMEOUT_S:g} s"
        except OSError:
            return None
    frames = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or not frames.isdigit() or int(frames) < 1:
        error = done.stderr.decode(errors="replace").strip().splitlines()
        return "ffprobe found no decodable video frame" + (f": {error[0]}" if error else "")
    return None
