"""Headless Chromium (Debian's package) rendering an HTML file to a PNG, for the tests that
look at evalq's reports; a machine without it skips them, saying why."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def chromium_or_skip() -> str:
    """The browser; without one a developer's run skips, and CI's fails: the reports are read
    in a real browser there (scripts/install-system-deps installs it)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and os.environ.get("CI"):
        pytest.fail("CI runs the browser tests: Debian's chromium is not installed")
    if found is None:
        pytest.skip("Debian's chromium is not installed (scripts/test installs it when it can)")
    return found


def assert_rendered(html: Path, size: tuple[int, int], scratch: Path, keep_as: Path) -> None:
    """Render `html` at `size` and check the page is not blank (text, bars and thumbnails give
    many colours); the screenshot is kept at `keep_as`, for a person to look at."""
    from PIL import Image

    from devtools.screenshots import screenshot

    chromium_or_skip()
    shot = scratch / "page.png"
    # Offline, with a profile of this test's own (devtools.screenshots' Chromium flags).
    screenshot(html, shot, size, profile=scratch / "chrome", timeout_s=120)
    with Image.open(shot) as image:
        assert image.size == size
        colors = image.convert("RGB").getcolors(maxcolors=1_000_000) or []
    assert len(colors) > 50  # text, bars and thumbnails: not a blank page
    shutil.copy(shot, keep_as)
