"""How every example writes its dataset, and the two rows a Gecko example picture gets: a prompt
it matches and a near miss, so a judge that looks at it should score the first row higher."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any


def write_rows(path: Path, rows: Iterable[Mapping[str, Any]], *, ensure_ascii: bool = True) -> Path:
    """JSONL, one row a line, UTF-8, its folder made if need be."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(row, ensure_ascii=ensure_ascii) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8")
    return path


@dataclass(frozen=True)
class MatchedPicture:
    """A Gecko example picture's prompts: the one it matches and its near miss. An image
    (evalq.examples.gecko) or a clip (evalq.examples.video) adds what is drawn, after the stem;
    the prompts and the background are given by name."""

    stem: str
    _: KW_ONLY
    match: str
    near_miss: str
    background: str = "white"

    def rows(self, column: str, ref: str) -> list[dict[str, str]]:
        """The picture ``ref`` (in ``column``) under the prompt it matches (id STEM-match)
        and under its near miss (STEM-near-miss)."""
        return [
            {"id": f"{self.stem}-match", "prompt": self.match, column: ref},
            {"id": f"{self.stem}-near-miss", "prompt": self.near_miss, column: ref},
        ]
