"""How numbers, money, time spans and a job's cost read wherever evalq shows them to a person:
the terminal tables, the status summary and the HTML reports say them the same way."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalq.core.models import JobSummary

SIMULATED_BANNER = (
    "SIMULATED JUDGE: verdicts come from evalq's fake Gemini server, not a real model"
)


def figure_text(value: float | None, signed: bool = False) -> str:
    """A score or mean to three places (a difference ``signed``); `n/a` where it is missing,
    as every table and page of evalq shows them."""
    if value is None:
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def p_text(value: float | None) -> str:
    """A p-value: three places, or two significant figures under 0.001 (never a bare 0)."""
    if value is None:
        return "n/a"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def money(value: float | None) -> str:
    """Dollars, or "unknown" (never $0 for what could not be priced)."""
    if value is None:
        return "unknown"
    return f"${value:.4f}" if value < 100 else f"${value:,.2f}"


def ago(seconds: float) -> str:
    """A time span, read at a glance: 4 s, 12 min, 3.5 h."""
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def interval_text(bounds: tuple[float, float] | None) -> str:
    return "n/a" if bounds is None else f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"


def rows_text(count: int) -> str:
    """ "1 row", "3 rows": a group of one reads as one."""
    return f"{count} row" if count == 1 else f"{count} rows"


NO_BILLED_CALL = "no billed call: every reply came from the cache, or none was needed"


def cost_line(s: JobSummary) -> str:
    """The job's cost, by role, with the price date, and what kind of figure it is."""
    if not s.usage:
        text = f"$0 ({NO_BILLED_CALL})"
    else:
        by_role = " · ".join(f"{role} {money(cost)}" for role, cost in s.cost_by_role.items())
        text = f"{money(s.cost_usd)} ({by_role})"
        if s.price_date:
            text += f" at prices of {s.price_date}"
        if s.cost_note:
            text += f"; {s.cost_note}"
    if s.simulated:
        text += (
            "; ESTIMATE: the simulated judge's token counts at Google's prices, nothing was billed"
        )
    if s.max_cost_usd is not None:
        text += f"; cap {money(s.max_cost_usd)} (spent {money(s.spent_usd)})"
    return text
