"""The adaptive benchmark's dataset: the mix of easy, split and near-coin-flip rows."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from devtools.bench.adaptive import MIX, kinds, noisy_dataset


def test_the_mix_holds_its_shares_and_every_row_its_own_odds(tmp_path: Path) -> None:
    assert Counter(kinds(200)) == {"easy": 140, "split": 40, "coin": 20}
    assert len(kinds(7)) == 7
    rows = [json.loads(line) for line in noisy_dataset(tmp_path, 10).read_text().splitlines()]
    odds = {kind: text for kind, _, text in MIX}
    for i, row in enumerate(rows):
        assert row["response"].endswith(f"[judge-odds {odds[row['kind']]} seed={i}]")
    assert len({row["id"] for row in rows}) == 10


def test_the_simulation_draws_each_rule_over_the_mix() -> None:
    from devtools.bench.adaptive_sim import RULES, change_chance, simulate
    from evalq.stats.adaptive import change_chance as evalqs

    assert change_chance(3, 0, 5, 1.0) == pytest.approx(evalqs(3, 0, 5))  # the same rule at (1, 1)
    assert change_chance(2, 0, 6, 0.19) < 0.05 < evalqs(2, 0, 6)  # two agreeing: stop or not
    figures = simulate(units=40, seed=3)
    assert list(figures) == [rule.name for rule in RULES]
    calls, agreement = figures["--samples 8"]
    assert calls == 8 and 0 <= agreement <= 1
    assert (
        2
        <= figures["auto, prior Beta(0.19, 0.19)"][0]
        < figures["--samples auto (evalq's rule)"][0]
    )
