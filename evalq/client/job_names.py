"""A job's name (--name, `name=`): the handle people find a job by in `evalq jobs`, so it is
checked before the job is stored: one printable line a table can show, never a surprise later,
and never a text a job reference would read as an id (evalq.client.job_refs), which would let
one job's name stand for another job."""

from __future__ import annotations

from evalq.client.job_refs import PREFIX, is_job_id
from evalq.core.errors import DatasetError

NAME_MAX_CHARS = 100


def reads_as_an_id(name: str) -> bool:
    """Whether job_refs would take `name` for a job id or an id prefix (4 to 12 hex digits)."""
    return is_job_id(name) or PREFIX.fullmatch(name) is not None


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
    if reads_as_an_id(name):
        raise DatasetError(
            f"name: {name!r} is 4 to 12 hex digits (0-9, a-f), which reads as a job id or the "
            "start of one and could stand for another job; add a character outside 0-9 a-f "
            f"(e.g. 'run-{name}')"
        )
    bad = next((c for c in name if not c.isprintable()), None)
    if bad is not None:
        raise DatasetError(
            f"name: only printable characters, got {bad!r} at position {name.index(bad)}"
        )
    return name
