"""Two jobs on one dataset, judged by two versions of the same alias (the fake server answering
as another version between them): `evalq compare` and `evalq leaderboard` say so in their
first lines, and a `--fail-under` check refuses to pass on it unless `--allow-mixed`. On the
shared workers and fake server: the judge is a model name of this test's own, so no other
test's jobs share its cached replies, and the version it sets is taken back when it ends (and
by the next test's reset of the fake)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalq.core.judge import SIMULATED_MODEL_VERSION
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import evalq_ok, run_evalq
from tests.support.fake_http import http

pytestmark = pytest.mark.integration

JUDGE = "versions-compare-judge"
V1, V2 = f"{SIMULATED_MODEL_VERSION}@1", f"{SIMULATED_MODEL_VERSION}@2"
DIFFERS = f"sides differ in judge model version ({JUDGE}): "


def small_example(folder: Path, rows: int = 3) -> Path:
    """The example Gecko dataset's first rows (their images beside them)."""
    from evalq.examples.gecko import write_gecko_image_example

    dataset = write_gecko_image_example(folder)
    lines = dataset.read_text(encoding="utf-8").splitlines()[:rows]
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dataset


def answering_as(fake: FakeGemini, suffix: str | None) -> str:
    """The fake's simulated judge answers as this version from now on (None: as started)."""
    status, body = http(fake.url, "/model-version", {"suffix": suffix})
    assert status == 200, body
    return str(body["model_version"])


@pytest.fixture
def versioned(fake: FakeGemini) -> Iterator[FakeGemini]:
    """The shared fake, its version suffix taken back after the test."""
    try:
        yield fake
    finally:
        answering_as(fake, None)


def test_compare_names_the_version_each_side_was_judged_by(
    client: Any, versioned: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    dataset = small_example(tmp_path / "example")
    assert answering_as(versioned, "1") == V1
    # Without the call cache: the same requests, answered by each version in turn.
    first = client.submit("gecko-image", dataset, judge_model=JUDGE, use_cache=False).job_id
    assert client.wait(first, timeout_s=180).status == "finished"
    assert answering_as(versioned, "2") == V2
    second = client.submit("gecko-image", dataset, judge_model=JUDGE, use_cache=False).job_id
    assert client.wait(second, timeout_s=180).status == "finished"
    env = worker_env(redis_server.url, versioned.url, COLUMNS="200")

    table = evalq_ok(env, "compare", first, second).stdout.splitlines()
    assert table[0] == f"{DIFFERS}{first}={V1}, {second}={V2}"
    data = json.loads(evalq_ok(env, "compare", first, second, "--json").stdout)
    assert data["mixed"] is True
    assert [d["line"] for d in data["setup_differences"]] == [table[0]]
    assert [s["judge_setup"]["model_versions"] for s in data["sides"]] == [
        {JUDGE: V1},
        {JUDGE: V2},
    ]

    # Same prompts, same simulated judge: A - B is 0, above -0.1, so only the setup fails
    # the check; above 0.1 it fails on the score as well, and says both.
    refused = run_evalq(env, "compare", first, second, "--fail-under", "-0.1")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert f"not checked against --fail-under: {DIFFERS}" in refused.stderr
    assert "--allow-mixed" in refused.stderr and "below --fail-under" not in refused.stderr
    assert refused.stdout.splitlines()[0] == table[0]
    strict = run_evalq(env, "compare", first, second, "--fail-under", "0.1")
    assert strict.returncode == 1
    assert DIFFERS in strict.stderr and "below --fail-under" in strict.stderr
    allowed = evalq_ok(env, "compare", first, second, "--fail-under", "-0.1", "--allow-mixed")
    assert allowed.stdout.splitlines()[0] == table[0]
    assert "--fail-under" not in allowed.stderr

    board = run_evalq(env, "leaderboard", first, second)
    assert board.returncode == 1 and board.stdout.splitlines()[0] == table[0]
    assert "not a ranking of the candidates alone" in board.stderr
    evalq_ok(env, "leaderboard", first, second, "--allow-mixed")

    import evalq

    result = evalq.compare(first, second, client=client)
    assert result.mixed
    assert [d["line"] for d in result.setup_differences] == [table[0]]
    alike = evalq.compare(f"a={first}", f"b={first}", client=client)  # itself, twice
    assert not alike.mixed and alike.setup_differences == []
