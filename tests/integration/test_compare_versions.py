"""Two jobs on one dataset, judged by two versions of the same alias (the fake server answering
as another version between them): `evalq compare` and `evalq leaderboard` say so in their
first lines, and a `--fail-under` check refuses to pass on it unless `--allow-mixed`. A stack
of its own: the version it sets must not reach another test's jobs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalq.core.judge import SIMULATED_MODEL_VERSION
from tests.support.cli import evalq_ok, run_evalq
from tests.support.stack import stack

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


def test_compare_names_the_version_each_side_was_judged_by(tmp_path: Path) -> None:
    dataset = small_example(tmp_path / "example")
    with stack(tmp_path / "stack", "--model-version-suffix", "1") as s:
        client = s.client()
        first = client.submit("gecko-image", dataset, judge_model=JUDGE).job_id
        assert client.wait(first, timeout_s=180).status == "finished"
        assert s.post("/model-version", {"suffix": "2"})["model_version"] == V2
        # Without the call cache: the same requests, answered again by the newer version.
        second = client.submit("gecko-image", dataset, judge_model=JUDGE, use_cache=False).job_id
        assert client.wait(second, timeout_s=180).status == "finished"
        env = s.env(COLUMNS="200")

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
