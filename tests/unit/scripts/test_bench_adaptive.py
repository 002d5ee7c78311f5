"""The adaptive benchmark's dataset: the mix of easy, split and near-coin-flip rows."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from devtools.bench.adaptive import MIX, kinds, noisy_dataset


def test_the_mix_holds_its_shares_and_every_row_its_own_odds(tmp_path: Path) -> None:
    assert Counter(kinds(200)) == {"easy": 140, "split": 40, "coin": 20}
    assert len(kinds(7)) == 7
    rows = [json.loads(line) for line in noisy_dataset(tmp_path, 10).read_text().splitlines()]
    odds = {kind: text for kind, _, text in MIX}
    for i, row in enumerate(rows):
        assert row["response"].endswith(f"[judge-odds {odds[row['kind']]} seed={i}]")
    assert len({row["id"] for row in rows}) == 10
