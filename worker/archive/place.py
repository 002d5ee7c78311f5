"""Where the archive is, read from the settings without loading SQLAlchemy: its URL (SQLite at
a default path when none is set), how to show it (never with a password), and its identity,
the name by which `evalq status` and the workers tell whether everyone writes to one archive.

`evalq status` of a live job asks only this module, so it stays as quick as before."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

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
                f"archive URL {text!r}: a SQLite archive is sqlite:///PATH (three slashes, then "
                "the file's path; four for an absolute one: sqlite:////var/lib/evalq/archive.sqlite)"
            )
        return _sqlite(Path(path[3:]).expanduser())
    if scheme in ("postgresql", "postgres") or scheme.startswith("postgresql+"):
        return _postgres(text)
    raise ArchiveURLError(
        f"archive URL {_hide_password(text)!r}: evalq's archive is SQLite (sqlite:///PATH) or "
        "PostgreSQL (postgresql://USER@HOST:PORT/DATABASE), or off"
    )


def _sqlite(path: Path) -> ArchivePlace:
    resolved = path.resolve()
    return ArchivePlace(
        url=f"sqlite:///{resolved}",
        shown=f"sqlite:///{resolved}",
        identity=f"sqlite://{socket.gethostname()}{resolved}",
        backend="sqlite",
    )


def _postgres(text: str) -> ArchivePlace:
    parts = urlsplit(text)
    url = urlunsplit(("postgresql+psycopg", parts.netloc, parts.path, parts.query, ""))
    host = parts.hostname or "localhost"
    port = parts.port or 5432
    database = parts.path.lstrip("/") or "postgres"
    return ArchivePlace(
        url=url,
        shown=_hide_password(urlunsplit(("postgresql", parts.netloc, parts.path, "", ""))),
        identity=f"postgresql://{host}:{port}/{database}",
        backend="postgresql",
    )


def _hide_password(text: str) -> str:
    parts = urlsplit(text)
    if parts.password is None:
        return text
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
