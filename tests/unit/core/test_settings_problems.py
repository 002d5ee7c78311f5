"""Every setting that fails its check is one line through the CLI: the variable, what it got
(a password or key masked) and the forms it takes; exit 2 for a command, 7 for a worker."""

from __future__ import annotations

import pytest

from evalq.client.cli.exit_codes import ERROR, NO_JUDGE
from tests.support.cli import bare_env, one_line_refusal, run_evalq

KEY = "AIzaSyD" + "x7" * 16  # the shape of a Gemini API key, pasted in the wrong variable

REFUSED = [
    (
        "EVALQ_MAX_FIELD_BYTES",
        "-3",
        "EVALQ_MAX_FIELD_BYTES: got '-3'; it takes a whole number above 0",
    ),
    ("EVALQ_JUDGE_TIMEOUT_S", KEY, "EVALQ_JUDGE_TIMEOUT_S: got '***'; it takes a number above 0"),
    (
        "EVALQ_WORKER_POOL",
        "prefork",
        "EVALQ_WORKER_POOL: got 'prefork'; it takes one of gevent, threads",
    ),
    (
        "GOOGLE_GENAI_USE_VERTEXAI",
        "maybe",
        "GOOGLE_GENAI_USE_VERTEXAI: got 'maybe'; it takes true or false (also 1/0, yes/no, on/off)",
    ),
    (
        "EVALQ_THINKING",
        "judge=128",
        "EVALQ_THINKING: got 'judge=128': not JSON (Expecting value: line 1 column 1 (char 0)); "
        'it takes a JSON object, e.g. {"validator": 0, "rubric": 2048, "judge": "min", '
        '"candidate": "default"}',
    ),
    (
        "EVALQ_RATE_LIMITS",
        '{"m": {"rpm": 0}}',
        "EVALQ_RATE_LIMITS (m.rpm): got '0': Input should be greater than 0; it takes a JSON "
        'object, e.g. {"gemini-2.5-flash": {"rpm": 1000, "tpm": 1000000}, "*": {"rpm": 60}}',
    ),
    (
        "EVALQ_DATA_ROOTS",
        '["/data"',
        "EVALQ_DATA_ROOTS: got '[\"/data\"': Expecting ',' delimiter: line 1 column 9 (char 8); "
        "it takes folders separated by ':', or a JSON list of folders",
    ),
    (
        "EVALQ_ARCHIVE_URL",
        "postgress://team:hunter2@db.internal/evalq",
        "EVALQ_ARCHIVE_URL: archive URL 'postgress://team:***@db.internal/evalq': evalq's archive "
        "is SQLite (sqlite:///PATH) or PostgreSQL (postgresql://USER:PASSWORD@HOST:PORT/DATABASE), "
        "or off",
    ),
    (
        "EVALQ_ARCHIVE_URL",
        "/srv/evalq/archive.sqlite",
        "EVALQ_ARCHIVE_URL: archive URL '/srv/evalq/archive.sqlite': evalq's archive is SQLite "
        "(sqlite:///PATH) or PostgreSQL (postgresql://USER:PASSWORD@HOST:PORT/DATABASE), or off",
    ),
]


@pytest.mark.parametrize(("variable", "value", "line"), REFUSED, ids=lambda v: str(v)[:24])
def test_a_setting_refused_is_one_line_with_what_it_got_and_the_forms_it_takes(
    variable: str, value: str, line: str
) -> None:
    env = {**bare_env(), variable: value}
    done = run_evalq(env, "jobs")
    assert done.returncode == ERROR, done.stderr
    assert one_line_refusal(done) == f"error: {line}"
    assert "hunter2" not in done.stderr and KEY not in done.stderr


@pytest.mark.parametrize("variable, value", [("EVALQ_THINKING", "{"), ("EVALQ_TURN_WINDOW", "-1")])
def test_a_worker_refuses_the_same_line_with_exit_7(variable: str, value: str) -> None:
    env = {**bare_env(), variable: value}
    done = run_evalq(env, "worker", "--no-judge-check")
    assert done.returncode == NO_JUDGE, done.stderr
    assert done.stderr.startswith(f"evalq worker: {variable}: got {value!r}")
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_what_a_setting_got_is_masked_when_it_is_a_key_or_a_password_only() -> None:
    from evalq.core.settings_problems import masked

    path = "/srv/evalq/customer_support_conversations_2026_q3/images"
    assert masked(path) == path  # a long path is no key
    assert masked(KEY) == "***"
    assert masked("sk-Abc123def456GHI789jkl012MNO345pqr678") == "***"
    assert masked("postgresql://team:hunter2@db/evalq") == "postgresql://team:***@db/evalq"
