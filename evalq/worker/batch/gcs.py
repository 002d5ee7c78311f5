"""Cloud Storage for Vertex AI batch mode, through google-cloud-storage (credentials found
as every Google library finds them, STORAGE_EMULATOR_HOST honoured for the tests' emulator);
imported on first use, so a worker that never runs a Vertex AI batch never loads it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from google.cloud import storage

PREFIX_SETTING = "EVALQ_VERTEX_BATCH_PREFIX"
PREFIX_FLAG = "--vertex-batch-prefix"
# A bucket name as Cloud Storage allows it (3-222 characters of lowercase letters, digits,
# dots, dashes and underscores), then an optional folder.
_URI = re.compile(r"gs://(?P<bucket>[a-z0-9][a-z0-9._-]{1,220}[a-z0-9])(?:/(?P<path>.*))?")
# The results files Vertex writes for Gemini, directly in the job's output folder:
# predictions.jsonl, or shards predictions_00001.jsonl... (as batch prediction jobs name them;
# the API reference writes "predictions_0001", so four digits are read too). Errors go into
# the same lines' `status`.
# Nothing else there is read, whatever its name: anyone who can write the bucket can add it.
_RESULTS = re.compile(r"predictions(?:_[0-9]{4,5})?\.jsonl")
IGNORED_SHOWN = 3  # names of ignored objects kept for `evalq status`


class StorageSetupError(ValueError):
    """The Cloud Storage prefix is missing, malformed, or names a bucket that can't be used."""


@dataclass(frozen=True)
class GcsPath:
    bucket: str
    path: str  # no leading or trailing slash; "" for the bucket's root

    @classmethod
    def parse(cls, uri: str, what: str = PREFIX_SETTING) -> GcsPath:
        match = _URI.fullmatch(uri.strip())
        if match is None:
            raise StorageSetupError(
                f"{what}={uri!r} is not a Cloud Storage prefix: give gs://BUCKET or "
                "gs://BUCKET/FOLDER"
            )
        return cls(match["bucket"], (match["path"] or "").strip("/"))

    def within(self, root: GcsPath) -> bool:
        """This prefix is `root` or a folder under it (same bucket; whole folder names)."""
        return self.bucket == root.bucket and (
            not root.path or self.path == root.path or self.path.startswith(root.path + "/")
        )

    def join(self, *parts: str) -> GcsPath:
        path = "/".join(p.strip("/") for p in (self.path, *parts) if p.strip("/"))
        return GcsPath(self.bucket, path)

    @property
    def uri(self) -> str:
        return f"gs://{self.bucket}/{self.path}" if self.path else f"gs://{self.bucket}"


@lru_cache(maxsize=4)
def storage_client(project: str | None) -> storage.Client:
    """One client per process and project (its HTTP session is thread-safe)."""
    from google.cloud import storage

    return storage.Client(project=project)


def check_prefix(client: storage.Client, prefix: GcsPath, source: str) -> None:
    """Before anything is stored: the bucket exists and its objects can be listed (what
    reading the results needs). `source` names where the prefix came from (the setting or
    the flag), so the one error line says what to change."""
    from google.api_core import exceptions as gcs_errors

    try:
        next(iter(client.list_blobs(prefix.bucket, prefix=prefix.path, max_results=1)), None)
    except gcs_errors.NotFound:
        raise StorageSetupError(
            f"{source}={prefix.uri}: Cloud Storage has no bucket {prefix.bucket!r}; create it "
            "or name one that exists"
        ) from None
    except gcs_errors.Forbidden as exc:
        raise StorageSetupError(
            f"{source}={prefix.uri}: not allowed to list objects in bucket {prefix.bucket!r} "
            f"({exc.message}); batch mode needs storage.objects.create, get and list there"
        ) from None


def upload(client: storage.Client, target: GcsPath, source: Path) -> None:
    client.bucket(target.bucket).blob(target.path).upload_from_filename(
        str(source), content_type="application/jsonl"
    )


@dataclass(frozen=True)
class ResultsFile:
    name: str
    size: int


@dataclass(frozen=True)
class OutputFolder:
    """A batch prediction job's output folder as listed: the results files Vertex writes (by
    name, in name order) and every other object found there (names relative to the folder),
    which is never read."""

    results: list[ResultsFile]
    ignored: list[str]


def output_files(client: storage.Client, folder: GcsPath) -> OutputFolder:
    """The job's output folder: only the names Vertex gives its results files, directly in
    it, are results; anything else (a planted `predictions-0.jsonl`, a subfolder) is ignored."""
    base = folder.path + "/" if folder.path else ""
    found, ignored = [], []
    for blob in client.list_blobs(folder.bucket, prefix=base):
        name = str(blob.name)[len(base) :]
        if _RESULTS.fullmatch(name):
            found.append(ResultsFile(str(blob.name), int(blob.size or 0)))
        else:
            ignored.append(name)
    return OutputFolder(sorted(found, key=lambda f: f.name), sorted(ignored))


def read_lines(client: storage.Client, bucket: str, name: str) -> Iterator[str]:
    """A results file's lines, streamed: never the whole file in memory."""
    with client.bucket(bucket).blob(name).open("r", encoding="utf-8", errors="replace") as lines:
        yield from lines
