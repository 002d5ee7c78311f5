"""The price table and the rule that applies it (pure: no Redis, no server)."""

from __future__ import annotations

import pytest

from evalq.core.pricing import (
    DEFAULT_PRICES,
    PriceError,
    Usage,
    call_cost_nanos,
    price_for,
    price_table,
    summarize_cost,
    usd,
)


def test_prices_per_million_tokens_thinking_billed_as_output() -> None:
    flash = DEFAULT_PRICES["gemini-2.5-flash"]
    # 1M prompt tokens at $0.30, 200k answer + 800k thinking tokens at $2.50
    assert usd(call_cost_nanos(flash, 1_000_000, 200_000, 800_000)) == pytest.approx(0.30 + 2.50)


def test_cached_prompt_tokens_are_billed_at_the_cached_rate() -> None:
    flash = DEFAULT_PRICES["gemini-2.5-flash"]
    # promptTokenCount includes the cached part: 600k fresh at $0.30, 400k cached at $0.03
    cost = usd(call_cost_nanos(flash, 1_000_000, 0, 0, cached_tokens=400_000))
    assert cost == pytest.approx(0.6 * 0.30 + 0.4 * 0.03)


def test_a_prompt_over_200k_tokens_is_billed_at_the_long_prices() -> None:
    pro = DEFAULT_PRICES["gemini-2.5-pro"]
    short = usd(call_cost_nanos(pro, 200_000, 10_000))
    long = usd(call_cost_nanos(pro, 200_001, 10_000))
    assert short == pytest.approx(0.2 * 1.25 + 0.01 * 10.0)
    assert long == pytest.approx(0.200001 * 2.50 + 0.01 * 15.0)


def test_batch_halves_the_price() -> None:
    lite = DEFAULT_PRICES["gemini-2.5-flash-lite"]
    full = call_cost_nanos(lite, 10_000, 1_000)
    assert call_cost_nanos(lite, 10_000, 1_000, batch=True) == pytest.approx(full / 2, abs=1)


def test_model_names_match_their_price_but_other_variants_do_not() -> None:
    assert (
        price_for("models/gemini-2.5-flash", DEFAULT_PRICES) is DEFAULT_PRICES["gemini-2.5-flash"]
    )
    assert price_for("gemini-2.5-flash-001", DEFAULT_PRICES) is DEFAULT_PRICES["gemini-2.5-flash"]
    assert (
        price_for("gemini-2.5-flash-lite", DEFAULT_PRICES)
        is DEFAULT_PRICES["gemini-2.5-flash-lite"]
    )
    assert price_for("gemini-2.5-flash-image", DEFAULT_PRICES) is None  # billed differently
    assert price_for("gemini-2.5-flash-preview-09-2025", DEFAULT_PRICES) is None


def test_evalq_prices_overrides_adds_and_removes() -> None:
    table = price_table(
        {
            "gemini-2.5-flash": {"input": 1, "output": 2},
            "my-model": {"input": 0.5, "output": 1.5, "cached_input": 0.05},
            "gemini-2.5-pro": None,
        }
    )
    assert table["gemini-2.5-flash"].input == 1.0 and table["gemini-2.5-flash"].cached_input is None
    assert table["gemini-2.5-flash"].source == "EVALQ_PRICES"
    assert price_for("my-model", table) is not None
    assert price_for("gemini-2.5-pro", table) is None
    # No cached rate given: cached tokens cost what fresh ones do (an upper bound).
    flash = table["gemini-2.5-flash"]
    assert call_cost_nanos(flash, 1000, 0, cached_tokens=1000) == call_cost_nanos(flash, 1000, 0)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"output": 1}, "'input' is required"),
        ({"input": 1, "output": -1}, "output must be a number >= 0"),
        ({"input": 1, "output": 1, "inptu_long": 2}, "unknown field"),
        ("cheap", "expected an object"),
    ],
)
def test_bad_price_entries_name_the_model_and_field(entry: object, message: str) -> None:
    with pytest.raises(PriceError, match=message) as caught:
        price_table({"gemini-x": entry})
    assert "gemini-x" in str(caught.value)


def test_a_model_without_a_price_makes_its_role_and_the_total_unknown_not_zero() -> None:
    usage = [
        Usage("rubric", "gemini-x", calls=1, prompt=100, output=50, cost_nanos=0),
        Usage("validator", "gemini-2.5-flash", calls=3, prompt=900, output=30, cost_nanos=345),
        Usage("judge", "gemini-x", calls=1, prompt=10),
        Usage("judge", "gemini-2.5-flash", calls=1, prompt=10, cost_nanos=3),
    ]
    cost = summarize_cost(usage, DEFAULT_PRICES)
    assert cost.cost_usd is None
    assert cost.by_role == {"rubric": None, "validator": usd(345), "judge": None}
    assert cost.by_model == {"gemini-x": None, "gemini-2.5-flash": usd(348)}
    assert cost.tokens_by_role["rubric"]["prompt"] == 100
    assert cost.unknown == ["gemini-x"] and cost.note is not None and "gemini-x" in cost.note
    assert [row["role"] for row in cost.rows] == ["rubric", "validator", "judge", "judge"]
    known = summarize_cost(usage[1:2], DEFAULT_PRICES)
    assert known.cost_usd == usd(345) and known.note is None and known.price_date
