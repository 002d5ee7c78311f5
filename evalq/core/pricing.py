"""What a job's tokens cost in dollars: a dated price table (Google's published prices as read on
PRICE_DATE, overridden by EVALQ_PRICES) and the one rule that applies it, per call. A model with
no price is never priced at 0: its cost is unknown (docs/concepts/cost.md)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Protocol

from evalq.core.thinking import model_name

# Sources per number: docs/architecture/gemini-facts.md. A job keeps the prices it was submitted
# with (JobConfig.prices), so every worker prices it alike.
PRICE_DATE = "2026-11-22"
PRICE_SOURCE = "Google's Gemini Developer API prices (ai.google.dev/gemini-api/docs/pricing)"
BATCH_DISCOUNT = 0.5  # "Batch API (50% cost reduction)"
NANOS_PER_USD = 1_000_000_000
_PER_TOKEN = 1_000_000  # prices are per million tokens


class PriceError(ValueError):
    """A price entry that can not be used; the message names the model and the field."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens for one model. ``cached_input`` None: the cached rate is not
    published, so cached tokens are billed at the input price (an upper bound)."""

    input: float
    output: float  # thinking tokens included: they are billed as output
    cached_input: float | None = None
    long_above: int | None = None  # prompt tokens above which the long prices apply
    input_long: float | None = None
    output_long: float | None = None
    cached_input_long: float | None = None
    batch_discount: float = BATCH_DISCOUNT
    source: str = PRICE_SOURCE
    date: str = PRICE_DATE

    def rates(self, prompt_tokens: int) -> tuple[float, float, float]:
        """(input, cached input, output) per million tokens for a call of this prompt size."""
        if self.long_above is not None and prompt_tokens > self.long_above:
            inp = self.input_long if self.input_long is not None else self.input
            out = self.output_long if self.output_long is not None else self.output
            cached = self.cached_input_long
            if cached is None:
                cached = self.cached_input if self.cached_input is not None else inp
            return inp, cached, out
        cached = self.cached_input if self.cached_input is not None else self.input
        return self.input, cached, self.output

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# Gemini Developer API, Standard tier, paid, USD per 1M tokens (text / image / video input).
DEFAULT_PRICES: dict[str, Price] = {
    "gemini-2.5-pro": Price(
        input=1.25,
        output=10.0,
        cached_input=0.125,
        long_above=200_000,
        input_long=2.50,
        output_long=15.0,
        cached_input_long=0.25,
    ),
    "gemini-2.5-flash": Price(input=0.30, output=2.50, cached_input=0.03),
    "gemini-2.5-flash-lite": Price(input=0.10, output=0.40, cached_input=0.01),
    "gemini-3.1-pro-preview": Price(
        input=2.00, output=12.00, long_above=200_000, input_long=4.00, output_long=18.00
    ),
    "gemini-3.5-flash": Price(input=1.50, output=9.00),
    "gemini-3.5-flash-lite": Price(input=0.30, output=2.50),
}

_VERSION_SUFFIX = re.compile(r"-\d{3}$")  # gemini-2.5-flash-001 is gemini-2.5-flash


def price_for(model: str, table: Mapping[str, Price]) -> Price | None:
    """The model's price, matched on its bare id ("models/x" and Vertex paths stripped) or that
    id less a stable version suffix ("-001"). Previews with dates and other variants differ in
    price, so they are not matched to their family: unknown until EVALQ_PRICES names them."""
    name = model_name(model)
    found = table.get(name)
    if found is None:
        found = table.get(_VERSION_SUFFIX.sub("", name))
    return found


def parse_price(model: str, value: object) -> Price | None:
    """One EVALQ_PRICES entry: {"input": .., "output": .., "cached_input": .., ...}; null
    removes the model from the table (its price becomes unknown)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise PriceError(f"price for {model!r}: expected an object, got {type(value).__name__}")
    known = {f.name for f in fields(Price)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise PriceError(
            f"price for {model!r}: unknown field(s) {', '.join(unknown)}; "
            f"fields: {', '.join(sorted(known))}"
        )
    for name in ("input", "output"):
        if name not in value:
            raise PriceError(f"price for {model!r}: {name!r} is required (USD per 1M tokens)")
    out: dict[str, Any] = {"source": "EVALQ_PRICES", "date": ""}
    for name, item in value.items():
        if name in ("source", "date"):
            out[name] = str(item)
            continue
        if item is None:
            out[name] = None
            continue
        if isinstance(item, bool) or not isinstance(item, int | float) or item < 0:
            raise PriceError(f"price for {model!r}: {name} must be a number >= 0, got {item!r}")
        if name == "batch_discount" and item > 1:
            raise PriceError(f"price for {model!r}: batch_discount is a share (0..1), got {item}")
        out[name] = int(item) if name == "long_above" else float(item)
    return Price(**out)


def price_table(overrides: Mapping[str, object] | None = None) -> dict[str, Price]:
    """The defaults with EVALQ_PRICES applied: an entry replaces the model's price, null
    removes it."""
    table = dict(DEFAULT_PRICES)
    for model, value in (overrides or {}).items():
        price = parse_price(model, value)
        key = model_name(model)
        if price is None:
            table.pop(key, None)
        else:
            table[key] = price
    return table


def table_from_json(data: Mapping[str, Mapping[str, Any]]) -> dict[str, Price]:
    """A table stored with a job (Price.to_json per model) read back."""
    return {model: Price(**dict(entry)) for model, entry in data.items()}


def job_prices(stored: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Price]:
    """The prices a job was submitted with (JobConfig.prices). A job stored before prices were
    recorded with it is priced by evalq's defaults: one fallback for every reader, so a
    worker, `evalq status` and the exporter agree on its cost."""
    return table_from_json(stored) if stored is not None else price_table()


def call_cost_nanos(
    price: Price,
    prompt_tokens: int,
    output_tokens: int,
    thought_tokens: int = 0,
    cached_tokens: int = 0,
    *,
    batch: bool = False,
) -> int:
    """What one call cost, in billionths of a dollar (integers add up exactly in Redis).
    ``prompt_tokens`` includes the cached ones, as Gemini's promptTokenCount does. Output is
    billed with thinking included; a prompt over a model's threshold bills the whole call at
    its long prices; `batch` halves every price."""
    inp, cached_rate, out = price.rates(prompt_tokens)
    cached = min(max(cached_tokens, 0), max(prompt_tokens, 0))
    fresh = max(prompt_tokens, 0) - cached
    usd_per_million = fresh * inp + cached * cached_rate + (output_tokens + thought_tokens) * out
    if batch:
        usd_per_million *= 1.0 - price.batch_discount
    return round(usd_per_million * (NANOS_PER_USD / _PER_TOKEN))


def usd(nanos: int) -> float:
    return nanos / NANOS_PER_USD


def nanos(amount_usd: float) -> int:
    return round(amount_usd * NANOS_PER_USD)


def vertex_price_note(models: Iterable[str], table: Mapping[str, Price]) -> str | None:
    """What an estimate on Vertex AI must say about its prices: the defaults are the Gemini
    API's list prices, and Google publishes Vertex AI's apart (a price page evalq could not
    source, so none is guessed). None when every model called is priced by EVALQ_PRICES (or
    not priced at all: cost_note says so)."""
    listed = {m: p for m in models if (p := price_for(m, table)) is not None}
    listed = {m: p for m, p in listed.items() if p.source == PRICE_SOURCE}
    if not listed:
        return None
    dates = ", ".join(sorted({p.date for p in listed.values()}))
    return (
        f"prices are the Gemini API's list prices (dated {dates}); Vertex AI bills its own "
        f"(set EVALQ_PRICES to price {', '.join(sorted(listed))} at them)"
    )


def describe(price: Price) -> str:
    """A price as one line: what a user needs to check it against Google's page."""
    parts = [f"input ${price.input:g}", f"output ${price.output:g}"]
    parts.append(
        "cached input "
        + (f"${price.cached_input:g}" if price.cached_input is not None else "= input")
    )
    if price.long_above is not None:
        parts.append(
            f"over {price.long_above:,} prompt tokens: input ${price.input_long or price.input:g},"
            f" output ${price.output_long or price.output:g}"
        )
    when = f", {price.date}" if price.date else ""
    return f"{', '.join(parts)} per 1M tokens ({price.source}{when})"


# ---- a job's usage, per role and model ------------------------------------------------------

TOKEN_KINDS = ("calls", "prompt", "output", "thought", "cached")  # Usage's counts
USAGE_KINDS = (*TOKEN_KINDS, "cost_nanos")
ROLE_ORDER = ("rubric", "validator", "judge", "candidate")


@dataclass
class Usage:
    """What one role spent on one model: billed calls and tokens (cache hits are free and not
    here), and their cost when the model's price is known."""

    role: str
    model: str
    calls: int = 0
    prompt: int = 0  # cached prompt tokens included, as Gemini reports them
    output: int = 0  # the answers
    thought: int = 0  # thinking, billed as output
    cached: int = 0
    cost_nanos: int = 0

    def tokens(self) -> dict[str, int]:
        return {kind: getattr(self, kind) for kind in TOKEN_KINDS}


class Billed(Protocol):
    """The tokens a call was billed for, as a reply (evalq.core.judge.JudgeReply) or a failed
    call's cost (evalq.core.errors.CallCost) carries them."""

    @property
    def prompt_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def thought_tokens(self) -> int: ...
    @property
    def cached_tokens(self) -> int: ...


def priced_usage(
    role: str, model: str, calls: int, billed: Billed, price: Price | None, *, batch: bool
) -> Usage:
    """What `calls` calls billed, priced by call_cost_nanos: the one way a job's usage is
    priced, online or for a batch's results. With no price its cost is 0 here; the model is
    then among the unknown ones (summarize_cost), never priced at 0 in a total."""
    prompt, output = billed.prompt_tokens, billed.output_tokens
    thought, cached = billed.thought_tokens, billed.cached_tokens
    cost = 0
    if price is not None:
        cost = call_cost_nanos(price, prompt, output, thought, cached, batch=batch)
    return Usage(role, model, calls, prompt, output, thought, cached, cost)


@dataclass
class CostSummary:
    """Cost and tokens split by role and by model. A figure that includes a model with no
    known price is None, never 0; ``note`` says which models and why."""

    cost_usd: float | None
    by_role: dict[str, float | None] = field(default_factory=dict)
    by_model: dict[str, float | None] = field(default_factory=dict)
    tokens_by_role: dict[str, dict[str, int]] = field(default_factory=dict)
    tokens_by_model: dict[str, dict[str, int]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    note: str | None = None
    price_date: str | None = None
    prices: dict[str, str] = field(default_factory=dict)  # model -> the price applied, in words


def _add(into: dict[str, int], tokens: Mapping[str, int]) -> None:
    for kind, amount in tokens.items():
        into[kind] = into.get(kind, 0) + amount


def _role_key(role: str) -> tuple[int, str]:
    return (ROLE_ORDER.index(role) if role in ROLE_ORDER else len(ROLE_ORDER), role)


def summarize_cost(usage: list[Usage], table: Mapping[str, Price]) -> CostSummary:
    rows = sorted(usage, key=lambda u: (_role_key(u.role), u.model))
    unknown = sorted({u.model for u in rows if price_for(u.model, table) is None})
    by_role: dict[str, float | None] = {}
    by_model: dict[str, float | None] = {}
    tokens_by_role: dict[str, dict[str, int]] = {}
    tokens_by_model: dict[str, dict[str, int]] = {}
    out_rows: list[dict[str, Any]] = []
    for u in rows:
        known = u.model not in unknown
        cost = usd(u.cost_nanos) if known else None
        for bucket, key in ((by_role, u.role), (by_model, u.model)):
            before = bucket.get(key, 0.0)
            bucket[key] = None if before is None or cost is None else before + cost
        _add(tokens_by_role.setdefault(u.role, {}), u.tokens())
        _add(tokens_by_model.setdefault(u.model, {}), u.tokens())
        out_rows.append({"role": u.role, "model": u.model, **u.tokens(), "cost_usd": cost})
    total: float | None = None if unknown else sum(v or 0.0 for v in by_role.values())
    note = None
    if unknown:
        note = (
            f"no price known for {', '.join(unknown)}: its tokens are shown, its cost and the "
            "total are unknown (set EVALQ_PRICES to price it)"
        )
    used = sorted({u.model for u in rows} - set(unknown))
    prices = {m: describe(p) for m in used if (p := price_for(m, table)) is not None}
    dates = sorted({p.date for m in used if (p := price_for(m, table)) is not None and p.date})
    return CostSummary(
        cost_usd=total,
        by_role=by_role,
        by_model=by_model,
        tokens_by_role=tokens_by_role,
        tokens_by_model=tokens_by_model,
        rows=out_rows,
        unknown=unknown,
        note=note,
        price_date=", ".join(dates) or None,
        prices=prices,
    )
