"""Media references and loading: forms users have, checked against the bytes."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from evalq.errors import InputError
from evalq.media import load_media, parse_media, sniff_mime

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
JPEG = b"\xff\xd8\xff\xe0" + b"\0" * 16


def test_sniff() -> None:
    assert sniff_mime(PNG) == "image/png"
    assert sniff_mime(JPEG) == "image/jpeg"
    assert sniff_mime(b"RIFF\0\0\0\0WEBPVP8 ") == "image/webp"
    assert sniff_mime(b"RIFF\0\0\0\0WAVE") is None
    assert sniff_mime(b"hello") == "text/plain"
    assert sniff_mime(b"\x00\x01\xfe binary") is None
    assert sniff_mime(b"%PDF-1.7 ...") == "application/pdf"
    assert sniff_mime(b"\x00\x00\x00\x18ftypmp42") == "video/mp4"
    assert sniff_mime(b"\x1a\x45\xdf\xa3\x01") == "video/webm"


def test_forms(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    assert parse_media("a.png", tmp_path, "r", "image").kind == "path"
    assert parse_media("https://x.test/a.png", tmp_path, "r", "image").kind == "url"
    assert parse_media("gs://b/a.png", tmp_path, "r", "image").kind == "file_uri"
    data_uri = "data:image/png;base64," + base64.b64encode(PNG).decode()
    ref = parse_media(data_uri, tmp_path, "r", "image")
    assert (ref.kind, ref.mime_type) == ("inline", "image/png")
    inline = {"inline_data": {"mime_type": "image/png", "data": base64.b64encode(PNG).decode()}}
    assert parse_media(inline, tmp_path, "r", "image").kind == "inline"


@pytest.mark.parametrize(
    "value", [None, "", "   ", 42, "data:image/png,notbase64", '{"contents": []}', {"foo": 1}]
)
def test_bad_cells_name_row_and_field(tmp_path: Path, value: object) -> None:
    with pytest.raises(InputError) as info:
        parse_media(value, tmp_path, "row-7", "image")
    assert (info.value.row_id, info.value.field) == ("row-7", "image")


def test_load_checks_bytes_against_claim(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    (tmp_path / "fake.png").write_bytes(b"GIF8 not really")
    (tmp_path / "empty.png").write_bytes(b"")
    ok = load_media(
        parse_media("a.png", tmp_path, "r", "image"), "r", "image", max_bytes=1000, timeout_s=1
    )
    assert (ok.mime_type, ok.data) == ("image/png", PNG)
    for name, message in [("fake.png", "is not image"), ("empty.png", "empty")]:
        with pytest.raises(InputError, match=message):
            load_media(
                parse_media(name, tmp_path, "r", "image"), "r", "image", max_bytes=1000, timeout_s=1
            )
    with pytest.raises(InputError, match="over the 10 limit"):
        load_media(
            parse_media("a.png", tmp_path, "r", "image"), "r", "image", max_bytes=10, timeout_s=1
        )
    claimed_jpeg = parse_media(
        {"inline_data": {"mime_type": "image/jpeg", "data": base64.b64encode(PNG).decode()}},
        tmp_path,
        "r",
        "image",
    )
    with pytest.raises(InputError, match="claims image/jpeg"):
        load_media(claimed_jpeg, "r", "image", max_bytes=1000, timeout_s=1)


def test_file_deleted_after_validation_is_input_error(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    ref = parse_media("a.png", tmp_path, "r", "image")
    (tmp_path / "a.png").unlink()
    with pytest.raises(InputError, match="cannot read"):
        load_media(ref, "r", "image", max_bytes=1000, timeout_s=1)


def test_unreachable_url_is_input_error() -> None:
    ref = parse_media("http://127.0.0.1:9/a.png", Path("."), "r", "image")
    with pytest.raises(InputError, match="failed"):
        load_media(ref, "r", "image", max_bytes=1000, timeout_s=2)
