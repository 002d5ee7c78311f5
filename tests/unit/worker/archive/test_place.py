"""Where the archive is: the default SQLite file, URLs as SQLAlchemy takes them, shown without
a password, and identities that tell two hosts' SQLite files apart."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from evalq.worker.archive.mixed_archives import mixed_archives_warning
from evalq.worker.archive.place import ArchiveURLError, archive_place, default_archive_path
from evalq.worker.settings import Settings


def test_unset_is_sqlite_in_the_users_data_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    place = archive_place(None)
    assert place is not None
    assert default_archive_path() == tmp_path / "evalq" / "archive.sqlite"
    assert place.url == f"sqlite:///{tmp_path}/evalq/archive.sqlite"
    assert place.identity == f"sqlite://{socket.gethostname()}{tmp_path}/evalq/archive.sqlite"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_archive_path() == Path.home() / ".local" / "share" / "evalq" / "archive.sqlite"


def test_off_means_no_archive() -> None:
    assert archive_place("off") is None
    assert archive_place(" OFF ") is None


def test_postgresql_urls_use_psycopg_and_never_show_a_password() -> None:
    place = archive_place("postgresql://evalq:s3cret@db.example:6543/history")
    assert place is not None
    assert place.url == "postgresql+psycopg://evalq:s3cret@db.example:6543/history"
    assert "s3cret" not in place.shown and "s3cret" not in place.identity
    assert place.shown == "postgresql://evalq:***@db.example:6543/history"
    assert place.identity == "postgresql://db.example:6543/history"
    assert archive_place("postgres://u@h/d").url == "postgresql+psycopg://u@h/d"  # type: ignore[union-attr]


def test_relative_sqlite_paths_resolve_and_bad_urls_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    place = archive_place("sqlite:///here.sqlite")
    assert place is not None and place.url == f"sqlite:///{tmp_path}/here.sqlite"
    with pytest.raises(ArchiveURLError, match="three slashes"):
        archive_place("sqlite://here.sqlite")
    with pytest.raises(ArchiveURLError, match=r"SQLite .* or PostgreSQL") as raised:
        archive_place("mysql://root:pw@h/d")
    assert "pw" not in str(raised.value)


def test_a_bad_archive_url_is_a_settings_error_naming_the_variable() -> None:
    with pytest.raises(ValueError, match="EVALQ_ARCHIVE_URL"):
        Settings(archive_url="redis://nope")


def test_workers_on_one_archive_say_nothing_and_on_two_say_which() -> None:
    one = {"w1": "postgresql://db:5432/e", "w2": "postgresql://db:5432/e"}
    assert mixed_archives_warning(one) is None
    assert mixed_archives_warning(one, "postgresql://db:5432/e") is None
    two = {"w1": "sqlite://a/x.sqlite", "w2": "sqlite://b/x.sqlite"}
    text = mixed_archives_warning(two)
    assert text is not None
    assert "sqlite://a/x.sqlite (w1)" in text and "sqlite://b/x.sqlite (w2)" in text
    mine = mixed_archives_warning(one, "sqlite://here/x.sqlite")
    assert mine is not None and "reads the archive sqlite://here/x.sqlite" in mine
    assert mixed_archives_warning({}, "sqlite://here/x.sqlite") is None
