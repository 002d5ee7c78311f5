"""Why a job's rows failed, counted: the summary's row_errors (shown by `evalq status`), identical
causes together ("6 × preparing the row failed: transport error: ...")."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from evalq.core.models import RowErrorCount, RowErrors, RowResult

TOP = 3  # causes named; the rest are counted
MAX_CHARS = 500  # of one cause: a detail may quote a long reply


def row_cause(row: RowResult) -> str:
    """What made a failed row fail, without what names the row (its id, line, candidate),
    followed by its units' most common detail when that says more (a row failing as "no
    question could be scored" has its cause in its units)."""
    error = row.error or row.reason or "failed"
    details = Counter(q.detail for q in row.questions if q.status == "unscored" and q.detail)
    if details:
        detail = details.most_common(1)[0][0]
        if detail not in error:
            error = f"{error}: {detail}"
    return _without_row(error, row.id, row.line)


def _without_row(text: str, row_id: str, line: int) -> str:
    """`row ID: `, `row ID, candidate 'C': ` (evalq.core.errors.InputError) and `line N: `
    taken out wherever they stand."""
    named = rf"\brow {re.escape(row_id)}(?:, candidate '[^']*')?: |\bline {line}: "
    return " ".join(re.sub(named, "", text).split())


def row_errors(rows: Iterable[RowResult]) -> RowErrors | None:
    """The most common causes of the failed rows (at most TOP, most rows first, ties in the
    order first met) and how many failed rows are left; None when no row failed."""
    causes = Counter(row_cause(r) for r in rows if r.status == "failed")
    if not causes:
        return None
    ranked = causes.most_common()
    top, rest = ranked[:TOP], ranked[TOP:]
    return RowErrors(
        top=[RowErrorCount(error=_cut(cause), rows=n) for cause, n in top],
        other_rows=sum(n for _, n in rest),
        other_errors=len(rest),
    )


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"
