"""The metric pages' screenshots: each page shows its report's parts and its comparison, each at
the size it was captured (the report's own text size) and opening at full size, and no
screenshot in docs/screenshots is left unshown."""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image

from devtools.screenshots import SCALE
from tests.conftest import ROOT

DOCS = Path(ROOT, "docs")
SHOTS = DOCS / "screenshots"
# [![alt](../screenshots/NAME.png){ width="W" }](../screenshots/NAME.png)
SHOWN = re.compile(
    r"\[!\[[^\]]+\]\(\.\./screenshots/(?P<name>[\w-]+\.png)\)\{ width=\"(?P<width>\d+)\" \}\]"
    r"\(\.\./screenshots/(?P=name)\)"
)


def test_each_metric_page_shows_its_report_and_its_comparison() -> None:
    pages = sorted(DOCS.glob("metrics/*.md"))
    assert pages
    for page in pages:
        metric = page.stem
        middle = "tags" if (SHOTS / f"{metric}-tags.png").exists() else "figures"
        expected = [f"{metric}-{part}.png" for part in ("summary", middle, "row")]
        shown = list(SHOWN.finditer(page.read_text(encoding="utf-8")))
        assert [m["name"] for m in shown] == [*expected, f"compare-{metric}.png"], page.name
        for m in shown:
            with Image.open(SHOTS / m["name"]) as image:
                assert int(m["width"]) == image.width // SCALE, (page.name, m["name"])


def test_every_screenshot_is_shown_on_a_page() -> None:
    referenced = {
        name
        for page in DOCS.rglob("*.md")
        for name in re.findall(r"screenshots/([\w-]+\.png)", page.read_text(encoding="utf-8"))
    }
    assert {p.name for p in SHOTS.glob("*.png")} <= referenced
