"""Which Cloud Storage objects a job's media may name: those under the buckets or folders the
deployment allows (EVALQ_GCS_MEDIA), and none when it allows none."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from evalq.core.errors import InputError

SETTING = "EVALQ_GCS_MEDIA"
SCHEME = "gs://"
_BUCKET = re.compile(r"[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]")
# Characters no plain object name here may hold: percent-encoding, a fragment or generation
# (#), a query, wildcards, a backslash some readers turn into a slash.
_REFUSED_CHARS = frozenset("%#?*[]\\")
_MAX_OBJECT_BYTES = 1024


class GcsNameError(ValueError):
    """A bucket, folder or object name that is not one plain Cloud Storage name."""


def bucket_problem(bucket: str) -> str | None:
    """Why `bucket` is no Cloud Storage bucket name (its naming rules), or None."""
    if bucket != bucket.lower():
        return f"bucket {bucket!r} is not lower case (Cloud Storage bucket names are)"
    if not _BUCKET.fullmatch(bucket):
        return (
            f"{bucket!r} is not a bucket name (3-222 characters: lower case letters, digits, "
            "'-', '_' and '.', starting and ending with a letter or digit)"
        )
    if "." not in bucket and len(bucket) > 63:
        return f"bucket {bucket!r} is over 63 characters"
    if any(not part or len(part) > 63 for part in bucket.split(".")):
        return f"bucket {bucket!r} has an empty or over-63-character part between dots"
    try:
        ipaddress.ip_address(bucket)
    except ValueError:
        return None
    return f"bucket {bucket!r} is an IP address, which Cloud Storage refuses as a name"


def _segments(path: str, what: str) -> tuple[str, ...]:
    """The '/'-separated segments of an object name or folder, refused if any is empty, `.` or
    `..`, or the name holds a character another reader might resolve differently."""
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise GcsNameError(f"its {what} is not valid text") from None
    if size > _MAX_OBJECT_BYTES:
        raise GcsNameError(f"its {what} is over {_MAX_OBJECT_BYTES} bytes")
    if bad := sorted({c for c in path if c in _REFUSED_CHARS or ord(c) < 32 or ord(c) == 127}):
        shown = " ".join(repr(c) for c in bad)
        raise GcsNameError(f"its {what} holds {shown} (no percent-encoding, wildcards, # or ?)")
    segments = tuple(path.split("/"))
    if any(s in ("", ".", "..") for s in segments):
        raise GcsNameError(f"its {what} has an empty, '.' or '..' segment")
    return segments


@dataclass(frozen=True)
class GcsPlace:
    """One allowed place: a bucket, and a folder in it (no segments: the whole bucket)."""

    bucket: str
    folder: tuple[str, ...] = ()

    @classmethod
    def parse(cls, entry: str) -> GcsPlace:
        """`gs://BUCKET`, `gs://BUCKET/FOLDER/` or the same without `gs://`; GcsNameError
        says what is wrong with any other."""
        text = entry.strip()
        if text.lower().startswith(SCHEME) and not text.startswith(SCHEME):
            raise GcsNameError(f"{entry!r}: write the scheme as {SCHEME}")
        if "://" in text and not text.startswith(SCHEME):
            raise GcsNameError(f"{entry!r}: only {SCHEME} places")
        text = text.removeprefix(SCHEME)
        bucket, _, folder = text.partition("/")
        if (problem := bucket_problem(bucket)) is not None:
            raise GcsNameError(f"{entry!r}: {problem}")
        if folder == "/":
            raise GcsNameError(f"{entry!r}: its folder has an empty segment")
        folder = folder.removesuffix("/")
        try:
            return cls(bucket, _segments(folder, "folder") if folder else ())
        except GcsNameError as exc:
            raise GcsNameError(f"{entry!r}: {exc}") from None

    def holds(self, bucket: str, segments: tuple[str, ...]) -> bool:
        """Whether the object lies in this place: same bucket, and the folder's whole segments
        first (gs://b/evals/ holds gs://b/evals/x.png, not gs://b/evals-old/x.png)."""
        n = len(self.folder)
        return bucket == self.bucket and len(segments) > n and segments[:n] == self.folder

    def __str__(self) -> str:
        return f"{SCHEME}{self.bucket}/" + "".join(f"{s}/" for s in self.folder)


def object_name(uri: str) -> tuple[str, tuple[str, ...]]:
    """A `gs://BUCKET/OBJECT` URI's bucket and object segments; GcsNameError if it is not one
    plain object name."""
    if not uri.startswith(SCHEME):
        raise GcsNameError(f"it is not a {SCHEME} URI")
    bucket, slash, path = uri.removeprefix(SCHEME).partition("/")
    if (problem := bucket_problem(bucket)) is not None:
        raise GcsNameError(problem)
    if not slash or not path:
        raise GcsNameError("it names a bucket, not an object")
    return bucket, _segments(path, "object name")


@dataclass(frozen=True)
class GcsMedia:
    """The places Cloud Storage media may come from; empty (the default): none. Vertex AI reads a
    `gs://` URI with the project's service agent, not the user's rights, so a URI is judged only
    as a plain object name (no `.`/`..`/empty segment, percent-encoding, wildcard or fragment)
    whose bucket matches exactly and whose path starts with an allowed folder's whole segments.
    The producer checks at load and the worker, the boundary, again before a request."""

    places: tuple[GcsPlace, ...] = ()

    @classmethod
    def of(cls, entries: Iterable[str]) -> GcsMedia:
        """From the setting's entries (or a Python API argument); GcsNameError names a bad one."""
        if isinstance(entries, str):
            entries = split(entries)
        return cls(tuple(GcsPlace.parse(entry) for entry in entries))

    def allows(self, uri: str) -> bool:
        try:
            bucket, segments = object_name(uri)
        except GcsNameError:
            return False
        return any(place.holds(bucket, segments) for place in self.places)

    def check(self, uri: str, row_id: str, field: str) -> None:
        """Raise the row's InputError unless the URI names a plain object in an allowed place."""
        try:
            bucket, segments = object_name(uri)
        except GcsNameError as exc:
            raise InputError(
                row_id, field, f"{uri} is not a plain Cloud Storage object URI: {exc}"
            ) from None
        if not any(place.holds(bucket, segments) for place in self.places):
            unset = "" if self.places else ", which is unset"
            raise InputError(
                row_id,
                field,
                f"{uri} is outside the Cloud Storage media allowed by {SETTING}{unset}: "
                "list its bucket or folder there to judge it",
            )


def split(value: str) -> list[str]:
    """The setting's comma-separated entries; an empty entry (`a,,b`) is refused, not skipped."""
    if not value.strip():
        return []
    entries = [part.strip() for part in value.split(",")]
    if any(not entry for entry in entries):
        raise GcsNameError(f"{value!r} has an empty entry between commas")
    return entries
