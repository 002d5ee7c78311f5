"""Which local files a job may read: regular files under its data roots, and no more bytes of
them than the size limit, so that no row makes a worker send /etc/passwd or a deploy token to
the judge."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from evalq.core.errors import InputError

OUTSIDE = "outside the allowed data roots"
NOT_FOUND = "file not found"
_CHUNK = 1024 * 1024


def real_path(path: str | os.PathLike[str]) -> Path:
    """The path with ~, .., and every symbolic link resolved (the file need not exist).

    A path the file system can't even encode (a lone surrogate, a NUL byte) is refused as
    ValueError, which callers report as an input error of the row."""
    try:
        return Path(os.path.realpath(os.path.expanduser(path)))
    except UnicodeEncodeError as exc:
        raise ValueError("the path is not valid text") from exc


@dataclass(frozen=True)
class DataRoots:
    """Folders local media may come from. ``bound``, when set, must contain the path too: the
    worker's own EVALQ_DATA_ROOTS, which no job's roots can widen."""

    roots: tuple[Path, ...]
    bound: tuple[Path, ...] = ()

    @classmethod
    def of(
        cls, roots: Iterable[str | os.PathLike[str]], bound: Iterable[str | os.PathLike[str]] = ()
    ) -> DataRoots:
        return cls(tuple(map(real_path, roots)), tuple(map(real_path, bound)))

    def allows(self, real: Path) -> bool:
        """Whether an already resolved path lies under a root (and under the bound, if any)."""
        return _under(real, self.roots) and (not self.bound or _under(real, self.bound))


def _under(path: Path, folders: tuple[Path, ...]) -> bool:
    return any(path.is_relative_to(folder) for folder in folders)


def locate(text: str, base_dir: Path, roots: DataRoots, row_id: str, field: str) -> Path:
    """The producer's check: the resolved path of a dataset cell, if it names a regular file
    under the roots. Relative paths start from the dataset's folder. The error for a path
    outside the roots says only that, never whether the file exists or what it is."""
    try:
        given = Path(text).expanduser()
        real = real_path(given if given.is_absolute() else base_dir / given)
        if not roots.allows(real):
            raise InputError(row_id, field, f"{text} is {OUTSIDE}")
        if not real.exists():
            raise InputError(row_id, field, f"{NOT_FOUND}: {text}")
        if not real.is_file():
            raise InputError(row_id, field, f"{text} is not a regular file")
    except ValueError as exc:  # a NUL byte or a lone surrogate: no file system path at all
        raise InputError(row_id, field, f"not a usable path: {exc}") from None
    return real


def read_file(path: str, roots: DataRoots, max_bytes: int, row_id: str, field: str) -> bytes:
    """The worker's read, checked again as the worker is the boundary (a file can change since
    the producer's check): the same checks on the path as stored, then at most max_bytes + 1
    bytes read whatever size the file reports (files under /proc report 0)."""
    try:
        real = real_path(path)
    except ValueError as exc:
        raise InputError(row_id, field, f"not a usable path: {exc}") from None
    if not roots.allows(real):
        raise InputError(row_id, field, f"{path} is {OUTSIDE}")
    # O_NOFOLLOW: a link swapped in after the check is not followed; O_NONBLOCK: opening a FIFO
    # does not wait for a writer (it is refused just below, as not a regular file).
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise InputError(row_id, field, f"{NOT_FOUND}: {path}") from None
        if exc.errno == errno.ELOOP:
            raise InputError(
                row_id, field, f"{path} changed into a link while being read"
            ) from None
        raise InputError(row_id, field, f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(row_id, field, f"{path} is not a regular file")
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InputError(row_id, field, f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if size > max_bytes:
        raise InputError(row_id, field, f"{path} is over the {max_bytes} byte limit")
    return b"".join(chunks)


def every_row_refused(
    errors: Iterable[tuple[int, InputError]], base_dir: Path, roots: DataRoots
) -> str | None:
    """Why a job whose every row failed at load on its local media (outside the roots, or
    missing) should not be stored at all, with the fix: the --data-root that holds the files
    outside the roots. None when some failure is of another kind (a job records those)."""
    outside: list[Path] = []
    missing: list[str] = []
    first = ""
    for line, error in errors:
        first = first or f"line {line}: {error}"
        message = error.message
        if message.endswith(f" is {OUTSIDE}"):
            given = Path(message.removesuffix(f" is {OUTSIDE}")).expanduser()
            outside.append(real_path(given if given.is_absolute() else base_dir / given))
        elif message.startswith(f"{NOT_FOUND}: "):
            missing.append(message.removeprefix(f"{NOT_FOUND}: "))
        else:
            return None
    if not first:
        return None
    said = [f"every row would fail on its media ({first})"]
    if outside:
        folder = os.path.commonpath([str(path.parent) for path in outside])
        where = ", ".join(str(root) for root in roots.roots)
        said.append(
            f"{len(outside)} rows name files outside the allowed data roots ({where}): give "
            f"--data-root {folder} (data_roots=[...] in Python)"
            + (" within the workers' EVALQ_DATA_ROOTS" if roots.bound else "")
        )
    if missing:
        said.append(
            f"{len(missing)} rows name files that are not there (relative paths start from the "
            f"dataset's folder, {base_dir})"
        )
    return "; ".join(said) + "; no job is stored"
