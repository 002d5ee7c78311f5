"""Where the archive is, read from the settings without loading SQLAlchemy (what `evalq status`
of a live job asks, kept quick): its URL, how to show it (never with a password), and the
identity by which status and the workers tell whether everyone writes to one archive."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

from evalq.core.secret_urls import UrlError, mask_url, split_url

OFF = "off"
DEFAULT_NAME = "archive.sqlite"


def default_archive_path() -> Path:
    """$XDG_DATA_HOME/evalq/archive.sqlite, else ~/.local/share/evalq/archive.sqlite: one file
    per user and machine, which every worker and command of that user shares."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "evalq" / DEFAULT_NAME


@dataclass(frozen=True)
class ArchivePlace:
    """An archive's URL as SQLAlchemy takes it (`url`), as a person may read it (`shown`, no
    password) and its identity (SQLite: host and file; PostgreSQL: server and database)."""

    url: str
    shown: str
    identity: str
    backend: str  # "sqlite" or "postgresql"


class ArchiveURLError(ValueError):
    """An archive URL evalq can not use."""


def archive_place(setting: str | None) -> ArchivePlace | None:
    """The archive EVALQ_ARCHIVE_URL names; None when it is "off"."""
    if setting is not None and setting.strip().lower() == OFF:
        return None
    if not setting or not setting.strip():
        return _sqlite(default_archive_path())
    text = setting.strip()
    scheme = text.split(":", 1)[0].lower()
    if scheme == "sqlite" or scheme.startswith("sqlite+"):
        path = text.split(":", 1)[1]
        if not path.startswith("///"):
            raise ArchiveURLError(
                f"archive URL {mask_url(text)!r}: a SQLite archive is sqlite:///PATH (three slashes, then "
                "the file's path; four for an absolute one: sqlite:////var/lib/evalq/archive.sqlite)"
            )
        return _sqlite(Path(path[3:]).expanduser())
    if scheme in ("postgresql", "postgres") or scheme.startswith("postgresql+"):
        return _postgres(text)
    raise ArchiveURLError(
        f"archive URL {mask_url(text)!r}: evalq's archive is SQLite (sqlite:///PATH) or "
        "PostgreSQL (postgresql://USER:PASSWORD@HOST:PORT/DATABASE), or off"
    )


def missing_folder(place: ArchivePlace) -> str | None:
    """Why a SQLite archive can't be opened here for the first time: a folder that is not
    there is a mistyped path far more often than a new archive, and an archive made empty in
    silence reads as a history lost. None when it is there, or the default place (made on
    first use)."""
    if place.backend != "sqlite" or place.url == _sqlite(default_archive_path()).url:
        return None
    folder = Path(place.url.removeprefix("sqlite:///")).parent
    if folder.is_dir():
        return None
    return (
        f"the archive at {place.shown} could not be used: its folder {folder} does not exist; "
        f"fix EVALQ_ARCHIVE_URL (or --archive-url), or make the folder (mkdir -p {folder}) to "
        f"start a new archive there (unset, it is {default_archive_path()}, made on first use)"
    )


def _sqlite(path: Path) -> ArchivePlace:
    resolved = path.resolve()
    return ArchivePlace(
        url=f"sqlite:///{resolved}",
        shown=f"sqlite:///{resolved}",
        identity=f"sqlite://{socket.gethostname()}{resolved}",
        backend="sqlite",
    )


POSTGRES_FORMS = "postgresql://USER:PASSWORD@HOST:PORT/DATABASE"


def _postgres(text: str) -> ArchivePlace:
    """The URL handed to SQLAlchemy is rebuilt from its parts, user and password
    percent-encoded: SQLAlchemy's parser ends a password at its first `@`, urllib and
    evalq's masking at the last (evalq.core.secret_urls), and they must agree."""
    try:
        parts = split_url(text, POSTGRES_FORMS)
    except UrlError as exc:
        raise ArchiveURLError(str(exc)) from None
    login = ""
    if parts.username or parts.password is not None:
        login = quote(unquote(parts.username), safe="")
        if parts.password is not None:
            login += ":" + quote(unquote(parts.password), safe="")
        login += "@"
    where = parts.host + (f":{parts.port}" if parts.port else "")
    path, _, query = parts.rest.partition("?")
    query = query.partition("#")[0]
    url = f"postgresql+psycopg://{login}{where}{path}" + (f"?{query}" if query else "")
    database = path.lstrip("/") or "postgres"
    return ArchivePlace(
        url=url,
        shown=mask_url(f"postgresql://{login}{where}{path}"),
        identity=f"postgresql://{parts.host or 'localhost'}:{parts.port or 5432}/{database}",
        backend="postgresql",
    )
