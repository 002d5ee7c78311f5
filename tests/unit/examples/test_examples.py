"""The example Gecko dataset: layout, determinism, and images that show what the rows claim."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from evalq.examples.gecko import GECKO_IMAGE_EXAMPLES, write_gecko_image_example
from evalq.fake_gemini.vision import analyse


def _rows(dataset: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in dataset.read_text(encoding="utf-8").splitlines()]


def test_writes_two_rows_per_image(tmp_path: Path) -> None:
    dataset = write_gecko_image_example(tmp_path / "example")
    assert dataset == tmp_path / "example" / "gecko_image.jsonl"
    rows = _rows(dataset)
    assert len(rows) == 2 * len(GECKO_IMAGE_EXAMPLES) >= 16
    assert all(set(row) == {"id", "prompt", "image"} for row in rows)
    assert len({row["id"] for row in rows}) == len(rows)
    assert Counter(row["image"] for row in rows) == Counter(
        {f"images/{e.stem}.png": 2 for e in GECKO_IMAGE_EXAMPLES}
    )
    for example in GECKO_IMAGE_EXAMPLES:
        by_id = {row["id"]: row for row in rows}
        match, near_miss = by_id[f"{example.stem}-match"], by_id[f"{example.stem}-near-miss"]
        assert match["prompt"] == example.match
        assert near_miss["prompt"] == example.near_miss != example.match


def test_image_paths_resolve_from_the_dataset_folder(tmp_path: Path) -> None:
    dataset = write_gecko_image_example(tmp_path, size_px=128)
    for row in _rows(dataset):
        path = dataset.parent / row["image"]
        assert not Path(row["image"]).is_absolute()
        with Image.open(path) as image:
            assert (image.format, image.size) == ("PNG", (128, 128))


def test_output_is_deterministic(tmp_path: Path) -> None:
    first = write_gecko_image_example(tmp_path / "a")
    second = write_gecko_image_example(tmp_path / "b")
    assert first.read_bytes() == second.read_bytes()
    for example in GECKO_IMAGE_EXAMPLES:
        name = f"images/{example.stem}.png"
        assert (first.parent / name).read_bytes() == (second.parent / name).read_bytes()


def test_rewriting_in_place_is_harmless(tmp_path: Path) -> None:
    dataset = write_gecko_image_example(tmp_path)
    before = dataset.read_bytes()
    assert write_gecko_image_example(tmp_path).read_bytes() == before


def test_examples_are_varied() -> None:
    shapes = {shape.shape for e in GECKO_IMAGE_EXAMPLES for shape in e.shapes}
    colors = {shape.color for e in GECKO_IMAGE_EXAMPLES for shape in e.shapes}
    assert len(shapes) >= 5 and len(colors) >= 8
    assert any(len(e.shapes) == 1 for e in GECKO_IMAGE_EXAMPLES)
    assert any(
        len({(s.color, s.shape) for s in e.shapes}) == 1 < len(e.shapes)
        for e in GECKO_IMAGE_EXAMPLES
    )
    assert any(e.background != "white" for e in GECKO_IMAGE_EXAMPLES)


@pytest.mark.parametrize("size_px", [128, 512])
def test_vision_sees_the_examples_at_other_sizes(tmp_path: Path, size_px: int) -> None:
    dataset = write_gecko_image_example(tmp_path, size_px=size_px)
    for example in GECKO_IMAGE_EXAMPLES:
        scene = analyse((dataset.parent / f"images/{example.stem}.png").read_bytes())
        seen = Counter((blob.color, blob.shape) for blob in scene.blobs)
        assert seen == Counter((s.color, s.shape) for s in example.shapes), example.stem


def test_too_small_canvas_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="size_px"):
        write_gecko_image_example(tmp_path, size_px=32)
