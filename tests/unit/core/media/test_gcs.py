"""`gs://` media only from the Cloud Storage places EVALQ_GCS_MEDIA allows: the setting parsed
strictly (a malformed value a settings error naming it), a URI matched on whole path segments
after refusing names other readers resolve otherwise (`..`, `//`, percent-encoding, upper case)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from evalq.core.data_roots import DataRoots
from evalq.core.errors import InputError
from evalq.core.media import MediaRules, load_media, parse_media
from evalq.core.media.gcs import GcsMedia, GcsNameError, GcsPlace
from evalq.core.models import MediaRef
from evalq.worker.settings import Settings

PLACES = GcsMedia.of("gs://team-media,gs://shared/evals/,other.example.com/a/b")


@pytest.mark.parametrize(
    "uri",
    [
        "gs://team-media/x.png",
        "gs://team-media/deep/down/x.png",
        "gs://shared/evals/x.png",
        "gs://shared/evals/2024/x.png",
        "gs://other.example.com/a/b/c.png",
        "gs://team-media/with space.png",
        "gs://team-media/ünïcode.png",
    ],
)
def test_objects_in_an_allowed_place_are_allowed(uri: str) -> None:
    assert PLACES.allows(uri)


@pytest.mark.parametrize(
    "uri",
    [
        "gs://payroll-bucket/salaries.csv",  # another bucket
        "gs://team-media-2/x.png",  # a bucket whose name starts with an allowed one
        "gs://Team-Media/x.png",  # bucket names are lower case: no case folding
        "gs://TEAM-MEDIA/x.png",
        "gs://shared/evals-old/x.png",  # a prefix of a segment is not the folder
        "gs://shared/evalsx.png",
        "gs://shared/evals",  # the folder's own name is no object in it
        "gs://shared/evals/",  # a folder, not an object
        "gs://shared/x.png",  # the bucket, outside the folder
        "gs://shared/Evals/x.png",  # object names are case-sensitive
        "gs://shared/evals/../payroll/salaries.csv",  # .. segments
        "gs://shared/evals/./x.png",
        "gs://shared/evals/..",
        "gs://shared//evals/x.png",  # empty segments
        "gs://shared/evals//x.png",
        "gs://shared/evals%2Fx.png",  # percent-encoding
        "gs://shared/evals/%2e%2e/payroll/salaries.csv",
        "gs://shared/%65vals/x.png",
        "gs://team-media%2f/x.png",
        "gs://shared/evals/x.png#123",  # a generation, a query, wildcards
        "gs://shared/evals/x.png?alt=media",
        "gs://shared/evals/*.png",
        "gs://shared/evals\\..\\payroll\\salaries.csv",  # a backslash read as a slash
        "gs://shared/evals/x\n.png",  # control characters
        "gs://team-media",  # a bucket, no object
        "gs://team-media/",
        "gs:///team-media/x.png",
        "gs://team-media/x/\udfff.png",  # no text at all
        "gs://team-media/" + "a" * 1025,  # longer than an object name can be
        "gs://1.2.3.4/x.png",
        "GS://team-media/x.png",
        "https://storage.googleapis.com/team-media/x.png",
    ],
)
def test_anything_else_is_refused(uri: str) -> None:
    assert not PLACES.allows(uri)
    with pytest.raises(InputError):
        PLACES.check(uri, "r1", "image")


def test_nothing_is_allowed_by_default() -> None:
    assert not GcsMedia().allows("gs://team-media/x.png")
    with pytest.raises(InputError) as refused:
        GcsMedia().check("gs://payroll-bucket/salaries.csv", "r1", "document")
    assert str(refused.value) == (
        "row r1: field 'document': gs://payroll-bucket/salaries.csv is outside the Cloud "
        "Storage media allowed by EVALQ_GCS_MEDIA, which is unset: list its bucket or folder "
        "there to judge it"
    )


def test_places_are_written_one_way() -> None:
    assert [str(p) for p in PLACES.places] == [
        "gs://team-media/",
        "gs://shared/evals/",
        "gs://other.example.com/a/b/",
    ]
    assert GcsPlace.parse("gs://shared/evals") == GcsPlace.parse("shared/evals/")
    assert GcsPlace.parse(" gs://team-media/ ") == GcsPlace("team-media")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("gs://Team-Media", "not lower case"),
        ("GS://team-media", "write the scheme as gs://"),
        ("s3://team-media", "only gs://"),
        ("gs://team-media,,gs://b2b", "empty entry"),
        ("gs://team-media,", "empty entry"),
        ("gs://shared//evals/", "empty, '.' or '..' segment"),
        ("gs://shared//", "empty segment"),
        ("gs://shared/evals/../payroll", "empty, '.' or '..' segment"),
        ("gs://shared/%65vals", "'%'"),
        ("gs://shared/evals/*", "'*'"),
        ("gs://ab", "not a bucket name"),
        ("gs://-team", "not a bucket name"),
        ("gs://team_media_", "not a bucket name"),
        ("gs://" + "a" * 64, "over 63 characters"),
        ("gs://a..b", "empty or over-63-character part"),
        ("gs://10.0.0.1", "IP address"),
    ],
)
def test_a_malformed_setting_is_one_settings_error_naming_it(value: str, says: str) -> None:
    with pytest.raises(GcsNameError, match=says.replace("*", r"\*").replace("?", r"\?")):
        GcsMedia.of(value)
    with pytest.raises(ValidationError) as refused:
        Settings(gcs_media=value)
    (error,) = refused.value.errors()
    message = str(error["msg"])
    assert "EVALQ_GCS_MEDIA: " in message and "\n" not in message
    assert "give gs://BUCKET or gs://BUCKET/FOLDER/" in message


def test_the_setting_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALQ_GCS_MEDIA", "gs://team-media, shared/evals/")
    assert Settings().gcs_media == ("gs://team-media/", "gs://shared/evals/")
    monkeypatch.setenv("EVALQ_GCS_MEDIA", "")
    assert Settings().gcs_media == ()
    monkeypatch.delenv("EVALQ_GCS_MEDIA")
    # The batch prefix's bucket is no media place.
    monkeypatch.setenv("EVALQ_VERTEX_BATCH_PREFIX", "gs://team-media/batches")
    assert Settings().gcs_media == ()


def test_the_producer_and_the_worker_both_check(tmp_path: Path) -> None:
    """parse_media (the producer, plain and in the seeds' file_data form) and load_media (the
    worker, given a reference stored by any client) refuse the same URI."""
    allowed = MediaRules(roots=DataRoots.of([tmp_path]), gcs=GcsMedia.of(["gs://team-media"]))
    payroll = "gs://payroll-bucket/salaries.csv"
    content = {"file_data": {"file_uri": payroll, "mime_type": "text/csv"}}
    for cell in (payroll, content):
        with pytest.raises(InputError, match="EVALQ_GCS_MEDIA") as refused:
            parse_media(cell, tmp_path, "payroll", "document", allowed)
        assert (refused.value.row_id, refused.value.field) == ("payroll", "document")
    ref = MediaRef(kind="file_uri", value=payroll, mime_type="text/csv")
    with pytest.raises(InputError, match="EVALQ_GCS_MEDIA"):
        load_media(ref, "payroll", "document", allowed, ("text/",))
    fine = MediaRef(kind="file_uri", value="gs://team-media/notes.txt", mime_type="text/plain")
    assert load_media(fine, "r", "document", allowed, ("text/",)).uri == fine.value
