"""Rank rows whose candidates announce a "level N", and a judge that prefers the higher
level whatever the order shown: a ranking whose right answer a test knows."""

from __future__ import annotations

import re
from pathlib import Path

from evalq.core.judge import JudgeRequest
from evalq.testing import MemoryJudge
from tests.support.datasets import write_rows
from tests.support.prompts import extract_section
from tests.support.rating_replies import choice

LEVEL_RE = re.compile(r"level (\d)")


def by_level() -> MemoryJudge:
    """Prefers the response announcing the higher "level N", whatever the order shown."""

    def reply(request: JudgeRequest) -> str:
        levels = [
            int(LEVEL_RE.findall(extract_section(request.prompt, kind) or "level 0")[0])
            for kind in ("response_a", "response_b")
        ]
        if levels[0] == levels[1]:
            return choice("SAME")
        return choice("A" if levels[0] > levels[1] else "B")

    return MemoryJudge("by-level", reply)


def level_rows(tmp_path: Path, n: int) -> Path:
    rows = [
        {
            "id": f"q{i}",
            "prompt": f"Question {i}?",
            "first": "answer at level 2.",
            "second": "answer at level 3.",
            "third": "answer at level 1.",
        }
        for i in range(n)
    ]
    return write_rows(tmp_path / "rank.jsonl", rows)


NAMES = ["first", "second", "third"]
CANDIDATES: dict[str, object] = {"candidates": NAMES, "bootstrap": 200}
