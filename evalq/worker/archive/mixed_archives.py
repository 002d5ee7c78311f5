"""Which archive the workers of one Redis write to, in words: light, for `evalq status`."""

from __future__ import annotations


def writers_fresh_s(watchdog_interval_s: float) -> float:
    """How long a worker's word on its archive counts: a few watchdog intervals (every
    worker says it again on each tick)."""
    return 3 * watchdog_interval_s + 5


def mixed_archives_warning(writers: dict[str, str], reader: str | None = None) -> str | None:
    """Words for workers of one Redis writing to different archives: jobs then land in
    whichever archive their last row's worker used, and no one place has the history."""
    distinct = set(writers.values())
    if len(distinct) <= 1 and (reader is None or not distinct or reader in distinct):
        return None
    if len(distinct) == 1:
        (written,) = distinct
        return (
            f"this command reads the archive {reader}, but the workers of this Redis write to "
            f"{written}: set EVALQ_ARCHIVE_URL (or --archive-url) to theirs"
        )
    by_archive: dict[str, list[str]] = {}
    for worker, archive in sorted(writers.items()):
        by_archive.setdefault(archive, []).append(worker)
    parts = [f"{archive} ({', '.join(names)})" for archive, names in sorted(by_archive.items())]
    return (
        "workers of this Redis write to different archives: "
        + "; ".join(parts)
        + ". Point every host at one archive: EVALQ_ARCHIVE_URL=postgresql://... "
        "(docs/concepts/archive.md)"
    )
