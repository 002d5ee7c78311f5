"""A job as people name it: its id, a unique prefix of its id (4 hex digits or more), or its
--name (the newest job of that name; `NAME~1` the one before it), turned into one job id for every
command and the Python API, from Redis and the archive alike. Light: the runtime loads on lookup."""

from __future__ import annotations

import re
import shlex
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from evalq.core.errors import DatasetError, EvalqError, JobNotFound

if TYPE_CHECKING:
    from evalq.worker.archive.archive import Archive
    from evalq.worker.jobs.reads import JobReads

JOB_ID = re.compile(r"[0-9a-f]{12}")
MIN_PREFIX = 4
PREFIX = re.compile(rf"[0-9a-f]{{{MIN_PREFIX},11}}")
SHORT = re.compile(rf"[0-9a-f]{{1,{MIN_PREFIX - 1}}}")  # hex, too short to be a prefix
LISTED = 20  # candidates of an ambiguous name listed at most
PAGE = 200  # job configs read from Redis per round trip
NAME_MAX_CHARS = 100
OLDER = re.compile(r"(?s)(.+)~(\d{1,6})")  # NAME~N: the N-th job named NAME before its newest


class Reader(Protocol):
    """Where a lookup looks (evalq.client.reads.JobReader has it all): Redis's job reads and
    address, and the archive (None: off)."""

    @property
    def job_reads(self) -> JobReads: ...

    @property
    def archive(self) -> Archive | None: ...

    def redis_address(self) -> str: ...


class AmbiguousJob(EvalqError):
    """A name or an id prefix that fits several jobs; the message lists them."""


@dataclass(frozen=True)
class Found:
    """A job a name or prefix fits, with what tells it apart in a list."""

    job_id: str
    name: str | None
    dataset: str
    created_at: float | None


def new_job_id() -> str:
    return uuid.uuid4().hex[:12]


def check_job_id(job_id: str) -> str:
    """Refuse what new_job_id could not have made before it reaches Redis: the id becomes part
    of key names, so `X:row:Y` would read some other key (of another type, or another job's)."""
    if not isinstance(job_id, str) or not JOB_ID.fullmatch(job_id):
        raise JobNotFound(
            f"{job_id!r} is not a job id: a job id is 12 hex digits (0-9, a-f), "
            "as `evalq run` and `evalq jobs` print it"
        )
    return job_id


def is_job_id(ref: object) -> bool:
    return isinstance(ref, str) and JOB_ID.fullmatch(ref) is not None


def reads_as_an_id(name: str) -> bool:
    """Whether a lookup would take `name` for a job id or an id prefix (4 to 12 hex digits)."""
    return is_job_id(name) or PREFIX.fullmatch(name) is not None


def check_name(name: object) -> str | None:
    """A job's name (--name, `name=`) as stored (None: no name). It is the handle people find a
    job by in `evalq jobs`, so it is checked before the job is stored: one printable line a
    table can show, and never a text that reads as an id, which would let one job's name stand
    for another job. A control character (a newline, a tab, an escape sequence) would break the
    jobs table or a terminal, so the error names the offending one."""
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
    if older := OLDER.fullmatch(name):
        raise DatasetError(
            f"name: {name!r} ends in ~{older[2]}, which reads as an older job named "
            f"{older[1]!r}; leave out the ~ (e.g. {older[1] + '-' + older[2]!r})"
        )
    bad = next((c for c in name if not c.isprintable()), None)
    if bad is not None:
        raise DatasetError(
            f"name: only printable characters, got {bad!r} at position {name.index(bad)}"
        )
    return name


def resolve(reader: Reader, ref: str) -> str:
    """The id of the one job `ref` names (an id, a unique id prefix, a --name or `NAME~N`). A
    full id is used as given, with no lookup: a job that is nowhere is said by the read that
    follows. A prefix several jobs fit is refused with each listed; none is refused naming where
    it looked."""
    if is_job_id(ref):
        return ref
    return pick(reader, ref, lookup(reader, ref))


def lookup(reader: Reader, ref: str) -> list[Found]:
    """Every job `ref` fits, in Redis and the archive, the newest first: by --name (exactly),
    and by id prefix when `ref` is 4 to 11 hex digits; failing both, `NAME~N` as the one job
    `named(NAME)[N]`. With one of the two out of reach, what the other has; with both out of
    reach (or one, and nothing found), its error. `ref` never reaches a key name: it is
    compared with what Redis and the archive list."""
    if not isinstance(ref, str) or not ref:
        raise JobNotFound(f"{ref!r} is not a job: give its id, a prefix of its id or its --name")
    found = _everywhere(reader, ref)
    if not found and (older := OLDER.fullmatch(ref)):
        return named(reader, older[1])[int(older[2]) :][:1]
    return found


def named(reader: Reader, name: str) -> list[Found]:
    """The jobs called `name`, the newest first: `name` (or `name~0`), `name~1`, ..."""
    return [job for job in _everywhere(reader, name) if job.name == name]


def handle(name: str, nth: int) -> str:
    """How the nth newest job called `name` is named on the command line."""
    return name if nth == 0 else f"{name}~{nth}"


def _everywhere(reader: Reader, ref: str) -> list[Found]:
    """Every job named `ref` exactly, or whose id starts with it, the newest first."""
    from evalq.worker.archive.errors import ArchiveUnavailable
    from evalq.worker.jobs.reads import REDIS_DOWN

    prefix = ref if PREFIX.fullmatch(ref) else None
    found: dict[str, Found] = {}
    redis_down: Exception | None = None
    try:
        for job in _in_redis(reader.job_reads, ref, prefix):
            found.setdefault(job.job_id, job)
    except REDIS_DOWN as exc:
        redis_down = exc
    try:
        for job in _in_archive(reader, ref, prefix):
            found.setdefault(job.job_id, job)
    except ArchiveUnavailable:
        if not found:
            raise
    if redis_down is not None and not found:
        from evalq.core.errors import RedisUnavailable

        raise RedisUnavailable(
            f"Redis at {reader.redis_address()} did not answer ({redis_down}) while looking "
            f"for job {ref!r}"
        )
    return sorted(found.values(), key=lambda j: (-(j.created_at or 0.0), j.job_id))


def _in_redis(reads: JobReads, ref: str, prefix: str | None) -> list[Found]:
    """Redis's jobs named `ref` or with an id starting with `prefix`, from their configs (a
    page at a time; no summary is built)."""
    ids = reads.job_ids(limit=0)  # 0: every id
    out = []
    for start in range(0, len(ids), PAGE):
        for job_id, config in reads.configs(ids[start : start + PAGE]).items():
            if config.name == ref or (prefix is not None and job_id.startswith(prefix)):
                out.append(Found(job_id, config.name, config.dataset, config.created_at))
    return out


def _in_archive(reader: Reader, ref: str, prefix: str | None) -> list[Found]:
    archive = reader.archive
    if archive is None:
        return []
    from evalq.worker.archive.filters import JobFilter

    which = [JobFilter(name=ref, exact_name=True, limit=None)]
    if prefix is not None:
        which.append(JobFilter(id_prefix=prefix, limit=None))
    return [
        Found(s.job_id, s.name, s.dataset, s.created_at)
        for selected in which
        for s in archive.summaries(selected)
    ]


def places(reader: Reader) -> str:
    """Where a job is looked for: Redis's host:port and the archive's URL as shown."""
    redis = f"Redis at {reader.redis_address()}"
    archive = reader.archive
    if archive is None:
        return f"{redis} (the archive is off: EVALQ_ARCHIVE_URL=off)"
    return f"{redis} or the archive at {archive.place.shown}"


def pick(reader: Reader, ref: str, found: list[Found]) -> str:
    """The one job found, the newest when they all have `ref` for --name (a name given again
    passes to the newer job), else the refusal: where it looked, or the candidates listed."""
    if len(found) == 1 or (found and all(job.name == ref for job in found)):
        return found[0].job_id
    if not found:
        raise JobNotFound(not_found(reader, ref))
    raise AmbiguousJob(ambiguous(ref, found))


def not_found(reader: Reader, ref: str) -> str:
    where = places(reader)
    if (older := OLDER.fullmatch(ref)) and (jobs := named(reader, older[1])):
        last = handle(older[1], len(jobs) - 1)
        return (
            f"no job {ref!r}: {len(jobs)} job(s) are named {older[1]!r}, the newest "
            f"{older[1]!r}, the oldest {last!r} (`evalq jobs {shlex.quote(older[1])}` lists them)"
        )
    if PREFIX.fullmatch(ref):
        return f"no job named {ref!r} or with an id starting with {ref!r} in {where}"
    if SHORT.fullmatch(ref):
        return (
            f"no job named {ref!r} in {where}; an id prefix takes at least {MIN_PREFIX} hex digits"
        )
    return (
        f"no job named {ref!r} in {where}, and {ref!r} is not a job id (12 hex digits, "
        "0-9 a-f) nor a prefix of one"
    )


def ambiguous(ref: str, found: list[Found]) -> str:
    """The refusal of a name or prefix several jobs fit: each on a line, the newest first,
    with its id, when it was created and its dataset (as much of the path as tells the
    datasets apart), and its name when that is not what was given."""
    from evalq.client.jobs.listing import created, short_paths

    by_name = all(job.name == ref for job in found)
    by = "name" if by_name else "id prefix" if all(job.name != ref for job in found) else None
    fits = f"the {by}" if by else "the name or id prefix"
    datasets = short_paths(job.dataset for job in found)
    lines = [f"{fits} {ref!r} fits {len(found)} jobs; give its id (or enough of it):"]
    for job in found[:LISTED]:
        named = f"  {job.name}" if job.name and job.name != ref else ""
        shown = datasets.get(job.dataset, "-")
        lines.append(f"  {job.job_id}  {created(job.created_at)}  {shown}{named}")
    if len(found) > LISTED:
        lines.append(f"  ... and {len(found) - LISTED} more (`evalq jobs` lists them)")
    return "\n".join(lines)
