"""A SQLite archive whose folder is not there is refused in one line with the fix, never made
empty in silence, unless it is the default place; `evalq jobs` says which archive it read and
that it is empty when it is."""

from __future__ import annotations

from pathlib import Path

from evalq.worker.archive.archive import Archive
from tests.integration.archive.test_archive_store import record
from tests.support.cli import bare_env, one_line_refusal, run_evalq


def archive_env(scratch_url: str, archive: str, data_home: Path) -> dict[str, str]:
    return bare_env() | {
        "EVALQ_REDIS_URL": scratch_url,
        "EVALQ_ARCHIVE_URL": archive,
        "XDG_DATA_HOME": str(data_home),
    }


def test_a_mistyped_sqlite_folder_is_refused_and_not_made(scratch_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "nonexistent" / "dir"
    env = archive_env(scratch_url, f"sqlite:///{folder / 'a.sqlite'}", tmp_path / "home")
    for command in (["jobs"], ["status", "support v1"], ["jobs", "--json"]):
        done = run_evalq(env, *command, cwd=tmp_path)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert one_line_refusal(done) == (
            f"error: the archive at sqlite:///{folder / 'a.sqlite'} could not be used: its "
            f"folder {folder} does not exist; fix EVALQ_ARCHIVE_URL (or --archive-url), or make "
            f"the folder (mkdir -p {folder}) to start a new archive there (unset, it is "
            f"{tmp_path / 'home' / 'evalq' / 'archive.sqlite'}, made on first use)"
        )
    assert not (tmp_path / "nonexistent").exists()

    folder.mkdir(parents=True)  # the fix it names
    made = run_evalq(env, "jobs", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (folder / "a.sqlite").is_file()
    assert made.stderr.splitlines()[-1].endswith("(empty: no job has ended there yet)")

    archive = Archive.at(f"sqlite:///{folder / 'a.sqlite'}")
    assert archive is not None
    archive.write(record("aaaaaaaaaaa1"))
    listed = run_evalq(env, "jobs", cwd=tmp_path)
    assert "aaaaaaaaaaa1" in listed.stdout
    assert listed.stderr.splitlines()[-1].endswith(
        f"the archive at sqlite:///{folder / 'a.sqlite'}"
    )


def test_jobs_says_which_archive_it_read_and_that_it_is_empty(
    scratch_url: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"  # the default place: made on first use
    env = archive_env(scratch_url, "", home)
    done = run_evalq(env, "jobs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    default = home / "evalq" / "archive.sqlite"
    assert default.is_file()
    address = scratch_url.split("//")[1].split("/", maxsplit=1)[0]
    assert done.stderr.splitlines()[-1] == (
        f"read from Redis at {address} and the archive at sqlite:///{default} "
        "(empty: no job has ended there yet)"
    )
    off = run_evalq(env | {"EVALQ_ARCHIVE_URL": "off"}, "jobs", cwd=tmp_path)
    assert off.stderr.splitlines()[-1] == (
        f"read from Redis at {address}; the archive is off (EVALQ_ARCHIVE_URL=off)"
    )
