"""A name given that is close to one evalq knows (a metric, a template): the refusal names the
one meant, as a typo is the likeliest reason a name is unknown."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(given: str, names: Iterable[str]) -> str:
    """` (did you mean 'NAME'?)` for the known name closest to `given` (case aside, `_` and
    `-` alike), or "" when none is close."""
    known = {name.lower().replace("-", "_"): name for name in names}
    close = difflib.get_close_matches(
        given.lower().replace("-", "_"), list(known), n=1, cutoff=0.75
    )
    return f" (did you mean {known[close[0]]!r}?)" if close else ""
