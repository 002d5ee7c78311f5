"""The one agreement summary every label-comparing metric reports (pairwise, ranking,
groundedness): same keys whatever the labels are, unlabelled rows left out."""

from __future__ import annotations

import pytest

from evalq.stats.agreement import label_agreement


def test_label_agreement_has_one_set_of_keys_for_two_judges_or_more() -> None:
    two = label_agreement({"a": {"r1": "A", "r2": "B"}, "b": {"r1": "A", "r2": "A"}})
    three = label_agreement({j: {"r1": 1, "r2": 0} for j in ("a", "b", "c")})
    assert set(two) == set(three) == {"rows_compared", "all_agree", "fleiss_kappa", "cohen_kappa"}
    assert list(three["cohen_kappa"]) == ["a vs b", "a vs c", "b vs c"]
    assert three["all_agree"] == 1.0
    assert three["fleiss_kappa"] == pytest.approx(1.0)


def test_label_agreement_leaves_out_rows_a_judge_did_not_label() -> None:
    # Judge b has no label on row 2 (absent) and None on row 3 (unscored): only rows 0 and 1
    # are compared, and the kappa is the one of those rows alone.
    summary = label_agreement({"a": {0: 1, 1: 0, 2: 1, 3: 0}, "b": {0: 1, 1: 1, 3: None}})
    assert summary["rows_compared"] == 2
    assert summary["all_agree"] == 0.5
    only_common = label_agreement({"a": {0: 1, 1: 0}, "b": {0: 1, 1: 1}})
    assert summary["cohen_kappa"] == only_common["cohen_kappa"]
    assert summary["fleiss_kappa"] == only_common["fleiss_kappa"]
