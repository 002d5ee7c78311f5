"""The crop of a screenshot: a box measured on the page in CSS pixels becomes the pixels of a
capture taken at a scale, with a margin, never cutting a glyph and never past the image."""

from __future__ import annotations

import pytest

from devtools.screenshots import Rect, crop_box


def test_a_box_inside_the_page_is_scaled_with_its_margin() -> None:
    assert crop_box(Rect(24, 100, 776, 300), (1600, 4000), scale=2, margin=8) == (
        32,
        184,
        1568,
        616,
    )


def test_fractions_widen_the_box_so_no_text_is_cut() -> None:
    # 10.3 - 1 = 9.3 -> 18.6 floors to 18; 20.2 + 1 = 21.2 -> 42.4 ceils to 43
    assert crop_box(Rect(10.3, 10.3, 20.2, 20.2), (100, 100), scale=2, margin=1) == (
        18,
        18,
        43,
        43,
    )


def test_the_margin_stops_at_the_edges_of_the_image() -> None:
    assert crop_box(Rect(2, 3, 799, 1000), (1600, 2000), scale=2, margin=8) == (0, 0, 1600, 2000)


def test_a_box_outside_the_capture_is_refused() -> None:
    with pytest.raises(ValueError, match="outside a 1600x2000 capture"):
        crop_box(Rect(0, 1200, 800, 1300), (1600, 2000), scale=2, margin=8)
