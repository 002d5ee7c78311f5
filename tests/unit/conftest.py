"""What the unit tests of datasets share: a folder holding the one image their rows name."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.images import PNG_SIGNATURE


@pytest.fixture
def image_folder(tmp_path: Path) -> Path:
    """The test's tmp_path, holding a.png (PNG_SIGNATURE: the loader reads no pixel)."""
    (tmp_path / "a.png").write_bytes(PNG_SIGNATURE)
    return tmp_path
