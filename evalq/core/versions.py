"""Judge model versions: an alias such as gemini-2.5-flash answers as different versions over time,
and each reply says which. A verdict, a row and a job record theirs, so two jobs a month apart
can be told apart even when both name the same alias."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from evalq.core.models import Verdict


def split_versions(joined: str | None) -> set[str]:
    """The versions in a joined string (one or several), none for None or ""."""
    return {part.strip() for part in (joined or "").split(",") if part.strip()}


def join_versions(versions: Iterable[str | None]) -> str | None:
    """Versions (each may already be joined) as one string, sorted, distinct and comma-joined, so
    a row judged across a version change says so in one field that compares as text; None when
    there are none."""
    distinct = set().union(*(split_versions(v) for v in versions))
    return ",".join(sorted(distinct)) or None


def versions_by_model(pairs: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    """(judge model, version or versions) pairs as judge model -> joined versions; a model
    with no version known is left out (nothing was read from it)."""
    seen: defaultdict[str, set[str]] = defaultdict(set)
    for model, version in pairs:
        seen[model] |= split_versions(version)
    return {model: ",".join(sorted(found)) for model, found in sorted(seen.items()) if found}


def verdict_versions(verdicts: Iterable[Verdict], default_model: str) -> dict[str, str]:
    """A row's RowResult.model_versions from its verdicts; a verdict naming no judge model was
    given by the job's main judge."""
    return versions_by_model((v.judge_model or default_model, v.model_version) for v in verdicts)


def merge_versions(maps: Iterable[Mapping[str, str]]) -> dict[str, str]:
    """Several rows' model_versions as one: per judge model, every version any row saw."""
    return versions_by_model(pair for versions in maps for pair in versions.items())


def setup_versions(judge_setup: Mapping[str, Any]) -> dict[str, set[str]]:
    """Judge model -> the versions its replies named, from a job's JobSummary.judge_setup."""
    found = judge_setup.get("model_versions") or {}
    return {str(model): split_versions(joined) for model, joined in found.items()}
