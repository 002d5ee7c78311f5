"""A password in the archive's or Redis's URL is never printed, whatever its shape: a URL that
does not parse (a `/` or `#` in the password, a bad port, an unknown scheme) is one line naming
its setting, exit 2 for a command and 7 for `evalq worker` (a real process), never pydantic's
traceback quoting the value; a password with `@` or `%` is read as urllib and redis-py read it,
so the archive is reached at its real host (and a worker's log never shows the password)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from devtools.local import RedisServer, free_port, start_redis, stop
from evalq.client.cli.exit_codes import ERROR, NO_JUDGE, REDIS_DOWN
from tests.support.archive import wait_archived
from tests.support.cli import bare_env, run_evalq, run_evalq_process
from tests.support.stack import stack

pytestmark = pytest.mark.integration

# Each password holds both words: neither may be printed, whichever side of an @ or / a
# library would have cut it at.
UNPARSEABLE = {
    "slash": "PW7/SECRET",
    "hash": "PW7#SECRET",
    "query": "PW7?SECRET",
}
PARSEABLE = {"at": "PW7@SECRET", "percent": "PW7%SECRET", "both": "PW7@SE%CRET"}


def assert_hidden(text: str) -> None:
    assert "PW7" not in text and "SECRET" not in text and "CRET" not in text, text


def setting_refusal(done: object, setting: str) -> str:
    """The one line of a refusal naming `setting`; nothing else printed, no secret."""
    out, err = done.stdout, done.stderr  # type: ignore[attr-defined]
    assert_hidden(out + err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert setting in lines[0] and "Traceback" not in err and "input_value" not in err
    return str(lines[0])


def archive_urls(host: str = "127.0.0.1:5432") -> dict[str, str]:
    urls = {name: f"postgresql://evalq:{pw}@{host}/x" for name, pw in UNPARSEABLE.items()}
    urls["port"] = "postgresql://evalq:PW7SECRET@127.0.0.1:54x2/x"
    urls["scheme"] = "mysql://evalq:PW7SECRET@127.0.0.1/x"
    return urls


def redis_urls(port: int) -> dict[str, str]:
    urls = {name: f"redis://:{pw}@127.0.0.1:{port}/0" for name, pw in UNPARSEABLE.items()}
    urls["port"] = "redis://:PW7SECRET@127.0.0.1:63x9/0"
    urls["scheme"] = f"http://:PW7SECRET@127.0.0.1:{port}/0"
    return urls


def commands(env: Mapping[str, str]) -> list[object]:
    return [run_evalq(env, "status", "abcdef123456"), run_evalq(env, "jobs")]


def test_an_archive_url_that_does_not_parse_is_one_line_exit_2(
    redis_server: RedisServer,
) -> None:
    base = {**bare_env(), "EVALQ_REDIS_URL": redis_server.url}
    for name, url in archive_urls().items():
        for done in commands({**base, "EVALQ_ARCHIVE_URL": url}):
            assert done.returncode == ERROR, (name, done)  # type: ignore[attr-defined]
            line = setting_refusal(done, "EVALQ_ARCHIVE_URL")
            assert line.startswith("error: EVALQ_ARCHIVE_URL: ")
            assert "postgresql://USER:PASSWORD@HOST:PORT/DATABASE" in line


def test_a_redis_url_that_does_not_parse_is_one_line_exit_2(redis_server: RedisServer) -> None:
    for name, url in redis_urls(free_port()).items():
        for done in commands({**bare_env(), "EVALQ_REDIS_URL": url}):
            assert done.returncode == ERROR, (name, done)  # type: ignore[attr-defined]
            line = setting_refusal(done, "EVALQ_REDIS_URL")
            assert line.startswith("error: EVALQ_REDIS_URL: ") and "redis://" in line
    flagged = run_evalq(bare_env(), "jobs", "--redis-url", redis_urls(6379)["slash"])
    assert flagged.returncode == ERROR
    setting_refusal(flagged, "EVALQ_REDIS_URL")


def test_a_worker_refuses_a_url_that_does_not_parse_with_exit_7(
    redis_server: RedisServer,
) -> None:
    """A real `evalq worker` process: what its log would hold is its standard streams."""
    base = {**bare_env(), "EVALQ_REDIS_URL": redis_server.url, "GEMINI_API_KEY": "k"}
    for env in (
        {**base, "EVALQ_ARCHIVE_URL": archive_urls()["slash"]},
        {**base, "EVALQ_ARCHIVE_URL": archive_urls()["port"]},
        {**base, "EVALQ_REDIS_URL": redis_urls(free_port())["hash"]},
    ):
        done = run_evalq_process(env, "worker")
        assert done.returncode == NO_JUDGE, done.stdout + done.stderr
        assert setting_refusal(done, "EVALQ_").startswith("evalq worker: EVALQ_")


def with_password(url: str, password: str, port: int | None = None) -> str:
    """`url` (a database on the tests' PostgreSQL) with `password` written in it raw."""
    parts = make_url(url)
    return (
        f"postgresql://{parts.username}:{password}@{parts.host}:{port or parts.port}/"
        f"{parts.database}"
    )


def test_a_password_with_at_or_percent_reaches_the_real_host_and_is_never_printed(
    postgres_url: str, private_redis: RedisServer
) -> None:
    """The tests' PostgreSQL trusts its local users, so any password connects: what this
    checks is that the URL is split at the right `@` (SQLAlchemy's own parser would have
    looked for a host named SECRET@127.0.0.1) and that nothing of it is printed. A Redis of
    the test's own: `jobs` lists Redis's jobs beside the archive's, and this one has none."""
    base = {**bare_env(), "EVALQ_REDIS_URL": private_redis.url}
    down = free_port()
    for name, password in PARSEABLE.items():
        done = run_evalq(
            {**base, "EVALQ_ARCHIVE_URL": with_password(postgres_url, password)}, "jobs", "--json"
        )
        assert done.returncode == 0, (name, done.stdout + done.stderr)
        assert json.loads(done.stdout) == []
        assert_hidden(done.stdout + done.stderr)

        away = with_password(postgres_url, password, port=down)
        done = run_evalq({**base, "EVALQ_ARCHIVE_URL": away}, "jobs")  # Redis's jobs, and:
        said = " ".join(done.stderr.split())  # as one line, however the terminal wrapped it
        assert done.returncode == 0, (name, done.stdout + done.stderr)
        assert_hidden(done.stdout + done.stderr)
        user = make_url(postgres_url).username
        assert f"warning: the archive at postgresql://{user}:***@127.0.0.1:{down}/" in said
        assert "Connection refused" in said and "resolve" not in said

    for name, password in PARSEABLE.items():
        port = free_port()
        url = f"redis://:{password}@127.0.0.1:{port}/0"
        done = run_evalq({**bare_env(), "EVALQ_REDIS_URL": url}, "status", "abcdef123456")
        assert done.returncode == REDIS_DOWN, (name, done.stdout + done.stderr)
        assert_hidden(done.stdout + done.stderr)
        assert f"127.0.0.1:{port}" in done.stderr  # the host after the last @


def test_a_worker_writes_an_archive_whose_password_holds_an_at_and_never_logs_it(
    postgres_url: str, tmp_path: Path
) -> None:
    from evalq.examples.gecko import write_gecko_image_example

    dataset = write_gecko_image_example(tmp_path / "data")
    url = with_password(postgres_url, PARSEABLE["both"])
    with stack(tmp_path / "stack", EVALQ_ARCHIVE_URL=url) as s:
        env, redis = s.env(), s.redis_client()
        done = run_evalq(env, "run", "gecko-image", str(dataset), "--wait", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        job_id = json.loads(done.stdout)["job_id"]
        wait_archived(redis, job_id)
        assert_hidden(done.stdout + done.stderr)
        listed = run_evalq(env, "jobs", "--json")
        assert listed.returncode == 0 and job_id in listed.stdout
        logs = s.pool.logs()
        assert f"job {job_id}" in logs and "archive: postgresql://" in logs
        assert_hidden(logs)


def test_a_redis_password_with_at_and_percent_is_read_whole_and_never_printed(
    tmp_path: Path,
) -> None:
    password = PARSEABLE["both"]
    server = start_redis(
        tmp_path / "redis",
        extra_args=["--requirepass", password],
        url=f"redis://:{password}@127.0.0.1:{{port}}/0",
    )
    try:
        env = {**bare_env(), "EVALQ_REDIS_URL": server.url, "EVALQ_ARCHIVE_URL": "off"}
        done = run_evalq(env, "jobs", "--json")  # in: the password is the whole of it
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout) == []
        assert_hidden(done.stdout + done.stderr)
        wrong = server.url.replace(password, "PW7@SECRETx")
        done = run_evalq({**env, "EVALQ_REDIS_URL": wrong}, "status", "abcdef123456")
        assert done.returncode == REDIS_DOWN, done.stdout + done.stderr
        assert_hidden(done.stdout + done.stderr)
    finally:
        assert server.proc is not None
        stop(server.proc)
