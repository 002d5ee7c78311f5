"""Column names given twice, in a dataset or in the flags, are refused naming the column: a record
keeps one value per name, so a second column of one name would drop the first in silence."""

from __future__ import annotations

from collections.abc import Sequence

from evalq.core.bounds import short
from evalq.core.errors import DatasetError

# The fix, whatever the source: --map picks a column by name, so it can't tell two apart.
RENAME = "rename one of them"


def repeated(names: Sequence[str]) -> dict[str, list[int]]:
    """Each name that is given more than once (read without its surrounding spaces: " response"
    and "response" are one column; case matters), with its 1-based positions, in the order the
    names first repeat."""
    positions: dict[str, list[int]] = {}
    for place, name in enumerate(names, start=1):
        positions.setdefault(name.strip(), []).append(place)
    return {name: where for name, where in positions.items() if len(where) > 1}


def said_list(items: Sequence[str]) -> str:
    """ "2", "2 and 3", "2, 3 and 5"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def repeats_said(names: Sequence[str], what: str = "column", shown: int = 5) -> str | None:
    """ "column 'response' appears 2 times, at positions 3 and 4" for each repeated name (a
    position whose name was written with spaces around it shows it as written), or None when
    no name repeats."""
    found = repeated(names)
    if not found:
        return None
    parts = []
    for name, where in list(found.items())[:shown]:
        places = [str(p) if names[p - 1] == name else f"{p} ({short(names[p - 1])})" for p in where]
        parts.append(
            f"{what} {short(name)} appears {len(where)} times, at positions {said_list(places)}"
        )
    if len(found) > shown:
        parts.append(f"{len(found) - shown} more names appear more than once")
    return "; ".join(parts)


# How each source maps a column to a field, as a fix names it.
MAP_FLAG = ("--map", "--map FIELD=NEW_NAME")
MAP_KEYWORD = ("column_map", "column_map={FIELD: NEW_NAME}")


def refuse_repeated_columns(
    where: str,
    names: Sequence[str],
    lost: str,
    *,
    mapped_by: tuple[str, str] = MAP_FLAG,
    what: str = "column",
) -> None:
    """Refuse a dataset whose columns repeat a name, naming each and its positions, and saying
    what fixes it. `where`: the file (and line); `lost`: how the source keeps one value only;
    `mapped_by`: how columns are mapped (MAP_FLAG, MAP_KEYWORD), which can't pick one of two."""
    said = repeats_said(names, what)
    if said is None:
        return
    flag, example = mapped_by
    raise DatasetError(
        f"{where}: {said}; {lost}, so nothing was submitted: {RENAME} ({flag} reads a column "
        f"by its name, so it can't pick one of two; once renamed, {example} reads it)"
    )


def refuse_repeated_names(flag: str, names: Sequence[str], what: str = "column") -> None:
    """--candidates a,b,a or --group-by x --group-by x: refused in one line, naming the name."""
    for name, where in repeated(names).items():
        raise DatasetError(
            f"{flag} names {what} {short(name)} {len(where)} times; name each {what} once"
        )
