"""One reading of where a URL's password is, and one mask: agreeing with urllib and redis-py
(the last `@`), masking everything a library splitting at another `@` could print, and
refusing shapes libraries read differently without quoting the password."""

from __future__ import annotations

import re

import pytest
from redis.connection import parse_url

from evalq.core.secret_urls import UrlError, mask_url, scrub, split_url, url_password
from evalq.worker.settings import Settings, SettingsError, load_settings

SHAPES = ["PW7@SECRET", "PW7%SECRET", "PW7@SE%40CRET", "PW7:SECRET"]


@pytest.mark.parametrize("password", SHAPES)
def test_the_password_is_what_redis_py_reads_and_masking_hides_all_of_it(password: str) -> None:
    url = f"redis://user:{password}@127.0.0.1:6380/2"
    parts = split_url(url, "FORMS")
    assert (parts.username, parts.password, parts.host, parts.port) == (
        "user",
        password,
        "127.0.0.1",
        6380,
    )
    read = parse_url(url)  # type: ignore[no-untyped-call]
    assert read["host"] == "127.0.0.1" and read["port"] == 6380
    assert url_password(url) == password
    masked = mask_url(url)
    assert masked == "redis://user:***@127.0.0.1:6380/2"
    assert "SECRET" not in scrub(f"failed to resolve host {password}@127.0.0.1", url)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("postgresql://u:PW7/SECRET@h/db", "holds a / ? or #"),
        ("postgresql://u:PW7#SECRET@h/db", "holds a / ? or #"),
        ("postgresql://u:PW7?SECRET@h/db", "holds a / ? or #"),
        ("postgresql://u:PW7SECRET@h:54x2/db", "port is not a number"),
        ("postgresql://u:PW7SECRET@h:99999/db", "port is not a number"),
        ("u:PW7SECRET@h/db", "no scheme://"),
    ],
)
def test_a_url_libraries_read_differently_is_refused_without_its_password(
    url: str, why: str
) -> None:
    with pytest.raises(UrlError, match=re.escape(why)) as refused:
        split_url(url, "FORMS")
    assert "SECRET" not in str(refused.value) and "FORMS" in str(refused.value)
    assert "SECRET" not in mask_url(url)


def test_a_query_password_and_text_that_is_no_url_are_masked_too() -> None:
    assert mask_url("rediss://h:6379/0?password=PW7SECRET&x=1") == (
        "rediss://h:6379/0?password=***&x=1"
    )
    assert mask_url("evalq:PW7SECRET@host") == "***@host"
    assert mask_url("postgresql://u@h/db") == "postgresql://u@h/db"  # a user alone stays


@pytest.mark.parametrize(
    ("variable", "url"),
    [
        ("EVALQ_ARCHIVE_URL", "mysql://evalq:PW7SECRET@127.0.0.1/x"),
        ("EVALQ_ARCHIVE_URL", "postgresql://evalq:PW7/SECRET@127.0.0.1/x"),
        ("EVALQ_REDIS_URL", "redis://:PW7#SECRET@127.0.0.1/0"),
        ("EVALQ_REDIS_URL", "redis://:PW7SECRET@127.0.0.1:port/0"),
    ],
)
def test_a_settings_refusal_names_the_variable_and_never_quotes_the_value(
    variable: str, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, url)
    with pytest.raises(SettingsError) as refused:
        load_settings()
    text = str(refused.value)
    assert text.startswith(f"{variable}: ") and "\n" not in text
    assert "SECRET" not in text and "input_value" not in text
    assert refused.value.__suppress_context__  # pydantic's error, which quotes it, not chained


def test_other_refusals_are_named_by_their_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALQ_JUDGE_TIMEOUT_S", "-1")
    with pytest.raises(
        SettingsError, match=r"^EVALQ_JUDGE_TIMEOUT_S: got '-1'; it takes a number above 0$"
    ):
        load_settings()


def test_a_unix_socket_redis_url_is_taken_as_it_is() -> None:
    assert Settings(redis_url="unix:///run/redis.sock").redis_url == "unix:///run/redis.sock"
