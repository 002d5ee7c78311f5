"""A metric's summary figures (JobSummary.metric_summary) as labelled, rounded tables. Each metric
stores its own figures, so the shapes are read rather than the names; nothing is shown as JSON."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CI_SUFFIX = "_ci95"


@dataclass(frozen=True)
class FigureTable:
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def label(key: str) -> str:
    """A summary key as words: win_rates_ci95 -> win rates 95% CI."""
    words = key.replace(CI_SUFFIX, " 95% CI").replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def number(value: Any) -> str:
    """A figure rounded for reading: floats to 3 places, whole numbers as they are."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.0f}" if value.is_integer() and abs(value) >= 1000 else f"{value:.3f}"
    return str(value)


def _is_interval(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and len(value) == 2
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    )


def interval(value: Any) -> str:
    if not _is_interval(value):
        return "n/a" if value is None else cell(value)
    return f"[{number(value[0])}, {number(value[1])}]"


def with_interval(value: Any, bounds: Any) -> str:
    """ "0.400 [0.168, 0.687]"; the figure alone when it has no interval."""
    return number(value) + (f" {interval(bounds)}" if _is_interval(bounds) else "")


def cell(value: Any) -> str:
    """Any value as short text for one table cell."""
    if _is_interval(value):
        return interval(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {cell(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(cell(v) for v in value)
    return number(value)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def figure_tables(figures: Mapping[str, Any]) -> list[FigureTable]:
    """The tables for one metric summary: first one table of its single figures, then a table
    per mapping or list of records."""
    singles: list[tuple[str, ...]] = []
    tables: list[FigureTable] = []
    used = {k for k in figures if k.endswith(CI_SUFFIX) and k[: -len(CI_SUFFIX)] in figures}
    used |= consumed_by_siblings(figures)
    for key, value in figures.items():
        if key in used:
            continue
        bounds = figures.get(key + CI_SUFFIX)
        if _scalar(value) or _is_interval(value):
            singles.append((label(key), with_interval(value, bounds) if bounds else cell(value)))
        elif isinstance(value, Mapping) and all(
            _scalar(v) or _is_interval(v) for v in value.values()
        ):
            tables.append(_flat_table(key, value, figures))
        elif isinstance(value, Mapping) and all(isinstance(v, Mapping) for v in value.values()):
            tables.append(_nested_table(key, value))
        elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            tables.append(_records_table(key, value))
        else:
            singles.append((label(key), cell(value)))
    out = [FigureTable("Figures", ("figure", "value"), tuple(singles))] if singles else []
    return out + tables


def _flat_table(key: str, value: Mapping[str, Any], figures: Mapping[str, Any]) -> FigureTable:
    """A mapping of numbers, with any sibling mappings of intervals as more columns (win rates
    with their intervals, strengths with strength and rank intervals)."""
    bounds = figures.get(key + CI_SUFFIX)
    siblings = [
        (k, v)
        for k, v in figures.items()
        if k.endswith(CI_SUFFIX)
        and k != key + CI_SUFFIX
        and k[: -len(CI_SUFFIX)] not in figures
        and isinstance(v, Mapping)
        and set(v) == set(value)
    ]
    header = (
        "",
        "value [95% CI]" if isinstance(bounds, Mapping) else "value",
        *(label(k) for k, _ in siblings),
    )
    rows = tuple(
        (
            str(name),
            with_interval(v, bounds.get(name)) if isinstance(bounds, Mapping) else cell(v),
            *(interval(s.get(name)) for _, s in siblings),
        )
        for name, v in value.items()
    )
    return FigureTable(label(key), header, rows)


def _nested_table(key: str, value: Mapping[str, Mapping[str, Any]]) -> FigureTable:
    columns = list(dict.fromkeys(c for inner in value.values() for c in inner))
    rows = tuple(
        (str(name), *(cell(inner.get(c)) if c in inner else "" for c in columns))
        for name, inner in value.items()
    )
    return FigureTable(label(key), ("", *(label(c) for c in columns)), rows)


def _records_table(key: str, value: list[Mapping[str, Any]]) -> FigureTable:
    columns = list(dict.fromkeys(c for record in value for c in record))
    rows = tuple(tuple(cell(record.get(c)) for c in columns) for record in value)
    return FigureTable(label(key), tuple(label(c) for c in columns), rows)


def consumed_by_siblings(figures: Mapping[str, Any]) -> set[str]:
    """Keys shown as another table's columns (strength_ci95 beside strength)."""
    out = set()
    for key, value in figures.items():
        if not isinstance(value, Mapping) or key.endswith(CI_SUFFIX):
            continue
        for k, v in figures.items():
            if (
                k.endswith(CI_SUFFIX)
                and k[: -len(CI_SUFFIX)] not in figures
                and isinstance(v, Mapping)
                and set(v) == set(value)
            ):
                out.add(k)
    return out
