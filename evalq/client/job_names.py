"""A job's name (--name, `name=`): the handle people find a job by in `evalq jobs`, so it is
checked before the job is stored: one printable line a table can show, never a surprise later."""

from __future__ import annotations

from evalq.core.errors import DatasetError

NAME_MAX_CHARS = 100


def check_name(name: object) -> str | None:
    """The name as stored (None: no name). A control character (a newline, a tab, an escape
    sequence) would break the jobs table or a terminal, so the error names the offending one."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise DatasetError(f"name: must be text, got {type(name).__name__} {name!r}")
    if not name.strip():
        raise DatasetError("name: must not be empty (leave it out for no name)")
    if len(name) > NAME_MAX_CHARS:
        raise DatasetError(f"name: at most {NAME_MAX_CHARS} characters, got {len(name)}")
    bad = next((c for c in name if not c.isprintable()), None)
    if bad is not None:
        raise DatasetError(
            f"name: only printable characters, got {bad!r} at position {name.index(bad)}"
        )
    return name
