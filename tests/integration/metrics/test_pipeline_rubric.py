"""The rubric metric end to end on real workers and the fake judge over HTTP, on the Gemini API's
routes and on Vertex AI's (one stack each, shared by the module): the example dataset with two
candidates through the CLI online and through the Python API in batch mode, its Vertex-named row
scored on its own rubric_groups, compared test by test; then the tests frozen by `evalq rubrics` and borrowed with
--questions-from are asked again with no rubric call (the fake counts calls per model)."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devtools.local import GcsEmulator
from tests.support.batches import FAST_POLLS
from tests.support.cli import announced_job, evalq_ok
from tests.support.stack import Stack, stack
from tests.support.vertex import VERTEX_ENV

pytestmark = pytest.mark.integration

RUBRIC_MODEL = "gemini-2.0-flash"  # writes the tests; the validator is the default judge
CANDIDATES = "careful,careless"
PREFIX = "gs://evalq-batches/rubric"


@pytest.fixture(scope="module", params=["gemini", "vertex"])
def api_stack(
    request: pytest.FixtureRequest,
    gcs_emulator: GcsEmulator,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, Stack]]:
    api = str(request.param)
    env: dict[str, str] = dict(FAST_POLLS)
    fake_env: dict[str, str] = {}
    if api == "vertex":
        env |= {**VERTEX_ENV, "EVALQ_VERTEX_BATCH_PREFIX": PREFIX}
        env["STORAGE_EMULATOR_HOST"] = fake_env["STORAGE_EMULATOR_HOST"] = gcs_emulator.url
    folder = tmp_path_factory.mktemp(f"rubric-{api}")
    with stack(folder, fake_env=fake_env or None, **env) as s:
        yield api, s


def _client(api: str, s: Stack) -> Any:
    if api == "vertex":
        return s.client(
            use_vertexai=True,
            vertex_project=VERTEX_ENV["GOOGLE_CLOUD_PROJECT"],
            vertex_location=VERTEX_ENV["GOOGLE_CLOUD_LOCATION"],
            vertex_api_key=VERTEX_ENV["EVALQ_VERTEX_API_KEY"],
            vertex_batch_prefix=PREFIX,
        )
    return s.client()


def _rubric_calls(s: Stack) -> int:
    return int(s.stats()["by_model"].get(RUBRIC_MODEL, 0))


def test_rubric_online_batch_frozen_and_borrowed(
    api_stack: tuple[str, Stack], tmp_path: Path
) -> None:
    import evalq
    from evalq.examples.text_rubrics import write_rubric_example

    api, s = api_stack
    env, client = s.env(), _client(api, s)
    dataset = write_rubric_example(tmp_path / "data")
    flags = ["--candidates", CANDIDATES, "--rubric-model", RUBRIC_MODEL]
    said = evalq_ok(env, "run", "rubric", str(dataset), *flags).stderr
    online = announced_job(said)
    batch = evalq.evaluate(
        dataset,
        "rubric",
        settings=client.settings,
        mode="batch",
        candidates=CANDIDATES.split(","),
        rubric_model=RUBRIC_MODEL,
        validator="batched",
    ).job_id
    for job in (online, batch):
        summary = client.wait(job, timeout_s=300)
        assert summary.status == "finished" and summary.simulated, (api, job, summary)
        assert summary.rows_scored == summary.rows_total == 6
        careful, careless = (summary.candidates[c] for c in CANDIDATES.split(","))
        assert careful.mean_score > careless.mean_score, (job, careful, careless)
        assert {"content", "safety"} <= set(summary.tag_scores)
    rows = {(r.id, r.candidate): r for r in client.results(online)}
    refund = rows[("refund", "careless")]  # its own Vertex rubric_groups, not a written rubric
    assert [(q.question, q.weight, q.source) for q in refund.questions] == [
        ("The response mentions 5.", 2.0, "dataset"),
        ("The response contains no abusive language.", 1.0, "dataset"),
    ]
    assert refund.score == 0.0 and rows[("refund", "careful")].score == 1.0
    assert all(q.rationale for r in rows.values() for q in r.questions)
    # Every candidate of a prompt is checked against the same tests.
    for row_id in ("tides", "bees", "refund"):
        sets = {rows[(row_id, c)].question_set for c in CANDIDATES.split(",")}
        assert len(sets) == 1, row_id
    if api == "vertex":
        assert "gemini" not in s.stats()["by_route"]
    # compare names the tests one candidate meets and the other does not, prompt by prompt.
    sides = [f"{online}:{c}" for c in CANDIDATES.split(",")]
    compared = json.loads(evalq_ok(env, "compare", *sides, "--json").stdout)
    differ = {d["question"]: d for d in compared["pairs"][0]["questions_differ"]}
    abuse = differ["The response contains no abusive language."]
    assert (abuse["a_only"], abuse["b_only"]) == (1, 0), differ
    for top in compared["pairs"][0]["top_rows"]:  # paired test by test, weighted as scored
        want = (rows[(top["id"], "careful")].score, rows[(top["id"], "careless")].score)
        assert (top["score_a"], top["score_b"]) == pytest.approx(want), top["id"]
    assert "The response contains no abusive" in evalq_ok(env, "compare", *sides).stdout
    compare_page = tmp_path / "compare.html"
    evalq_ok(env, "compare", *sides, "--html", str(compare_page))
    assert "<td>The response contains no abusive language.</td>" in compare_page.read_text()
    page = tmp_path / "report.html"
    evalq_ok(env, "report", online, "--html", str(page))
    shown = html.unescape(page.read_text(encoding="utf-8"))
    assert "Per-tag scores" in shown and "(weight 2.0)" in shown
    assert all(q.rationale in shown for r in rows.values() for q in r.questions if q.rationale)

    # Frozen by `evalq rubrics` (from the cache the jobs filled), then run with no cache: the
    # same tests, and not one call to the rubric model; so too for --questions-from.
    frozen = tmp_path / "frozen.jsonl"
    evalq_ok(
        env,
        "rubrics",
        str(dataset),
        "--metric",
        "rubric",
        "--out",
        str(frozen),
        "--map",
        "response=careful",
        "--rubric-model",
        RUBRIC_MODEL,
    )
    written = [json.loads(line) for line in frozen.read_text().splitlines()]
    assert all(record.get("questions") or record.get("rubric_groups") for record in written)
    before = _rubric_calls(s)
    reuse = ["--map", "response=careful", "--no-cache", "--rubric-model", RUBRIC_MODEL]
    again = announced_job(evalq_ok(env, "run", "rubric", str(frozen), *reuse).stderr)
    borrowed = announced_job(
        evalq_ok(env, "run", "rubric", str(dataset), *reuse, "--questions-from", online).stderr
    )
    for job in (again, borrowed):
        client.wait(job, timeout_s=300)
        sets = {r.id: r.question_set for r in client.results(job)}
        assert sets == {i: rows[(i, "careful")].question_set for i in sets}, job
    assert _rubric_calls(s) == before
