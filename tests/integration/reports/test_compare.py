"""`evalq compare` and `evalq leaderboard` on two real jobs: the example's `exact` model draws
what each prompt asks for, the `sloppy` one misses a detail; the fake server's simulated judge
looks at the pixels. The numbers the commands print are checked against the rows' own scores
and scipy's exact permutation test; the HTML report is rendered in headless Chromium."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as sp

from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.chromium import assert_rendered
from tests.support.cli import evalq_long_ok

pytestmark = pytest.mark.integration


def add_row(dataset: Path, row: dict[str, str]) -> None:
    with dataset.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")


def test_compare_and_leaderboard_of_two_models(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    from evalq.examples.comparison import write_comparison_example
    from evalq.examples.gecko import GECKO_IMAGE_EXAMPLES, draw_example

    example = write_comparison_example(tmp_path / "example")
    exact, sloppy = example.per_model["exact"], example.per_model["sloppy"]
    # One more prompt: exact drew it, sloppy's file is missing, so sloppy's row fails
    # (input_error). It must be left out of the paired figures and counted, never a 0.
    draw_example(GECKO_IMAGE_EXAMPLES[0]).save(tmp_path / "example" / "images" / "extra.png")
    add_row(exact, {"id": "extra", "prompt": "a red circle alone", "image": "images/extra.png"})
    add_row(sloppy, {"id": "extra", "prompt": "a red circle alone", "image": "images/gone.png"})

    job_a = client.submit("gecko-image", exact, judge_model="compare-test-judge").job_id
    job_b = client.submit("gecko-image", sloppy, judge_model="compare-test-judge").job_id
    client.wait(job_a, timeout_s=240)
    client.wait(job_b, timeout_s=240)
    rows_a = {r.id: r for r in client.results(job_a)}
    rows_b = {r.id: r for r in client.results(job_b)}
    assert rows_b["extra"].status == "failed" and rows_b["extra"].reason == "input_error"
    ids = [i for i in rows_a if i != "extra"]
    assert all(rows_a[i].score is not None and rows_b[i].score is not None for i in ids)
    assert all(q.result is not None for i in ids for q in rows_a[i].questions + rows_b[i].questions)
    diffs = [(rows_a[i].score or 0.0) - (rows_b[i].score or 0.0) for i in ids]

    env = worker_env(redis_server.url, fake.url, COLUMNS="200")
    html = tmp_path / "compare.html"
    out = evalq_long_ok(env, "compare", job_a, job_b, "--json", "--html", str(html))
    data = json.loads(out.stdout)
    (pair,) = data["pairs"]
    assert data["aligned_by"] == "id" and data["seed"] == 15
    assert pair["counts"]["paired"] == len(ids) == 9
    assert pair["counts"]["unscored_b"] == 1
    assert pair["counts"]["questions_left_out"] == 0
    overall = pair["overall"]
    assert overall["rows"] == 9
    assert overall["mean_diff"] == pytest.approx(float(np.mean(diffs)))
    assert overall["mean_diff"] > 0
    assert overall["wins"] == sum(d > 0 for d in diffs)
    assert overall["losses"] == sum(d < 0 for d in diffs)
    reference = sp.permutation_test(
        ([rows_a[i].score for i in ids], [rows_b[i].score for i in ids]),
        lambda x, y, axis=-1: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
    ).pvalue
    assert overall["p_method"] == "exact"
    assert overall["p_permutation"] == pytest.approx(reference, abs=1e-12)
    assert overall["p_permutation"] < 0.05 and overall["significant"] is True
    assert overall["ci95"][0] > 0
    color = pair["tags"]["color"]
    color_rows = [
        i for i in ids if "color" in rows_a[i].tag_scores and "color" in rows_b[i].tag_scores
    ]
    assert color["rows"] == len(color_rows)
    assert color["mean_diff"] == pytest.approx(
        float(
            np.mean(
                [rows_a[i].tag_scores["color"] - rows_b[i].tag_scores["color"] for i in color_rows]
            )
        )
    )
    top = pair["top_rows"][0]
    assert top["diff"] == pytest.approx(max(diffs))
    assert any(q["result_a"] == 1 and q["result_b"] == 0 for q in top["questions"])

    table = evalq_long_ok(env, "compare", job_a, job_b)
    assert "SIMULATED" in table.stdout and "significant at 0.05" in table.stdout
    assert "1 unscored in" in table.stdout

    csv_path = tmp_path / "board.csv"
    board = json.loads(
        evalq_long_ok(
            env,
            "leaderboard",
            f"sloppy={job_b}",
            f"exact={job_a}",
            "--json",
            "--csv",
            str(csv_path),
        ).stdout
    )
    first, second = board["candidates"]
    assert (first["candidate"], second["candidate"]) == ("exact", "sloppy")
    assert first["significantly_better_than"] == ["sloppy"]
    assert first["rows"] == board["rows_common"] == 9
    assert first["mean"] == pytest.approx(float(np.mean([rows_a[i].score for i in ids])))
    records = list(csv.DictReader(io.StringIO(csv_path.read_text())))
    assert [r["candidate"] for r in records] == ["exact", "sloppy"]
    assert records[0]["significantly_better_than"] == "sloppy"
    assert "tag:color" in records[0]

    import evalq

    result = evalq.compare(evalq.Job(job_a, client), f"sloppy={job_b}", client=client)
    (row,) = result.overall.to_dict(orient="records")
    assert (row["a"], row["b"], row["rows"]) == (job_a, "sloppy", 9)
    assert row["mean_diff"] == pytest.approx(overall["mean_diff"])
    assert row["p_permutation"] == pytest.approx(overall["p_permutation"])
    assert row["rows_unscored_b"] == 1
    assert set(result.per_tag["tag"]) == set(pair["tags"])
    assert len(result.per_row) == 10  # nine pairs and the unscored row, marked as such
    assert result.per_row.set_index("id").loc["extra", "status"] == "unscored_b"
    assert list(result.leaderboard["candidate"]) == [job_a, "sloppy"]

    page = html.read_text()
    assert page.count('src="data:image/jpeg;base64,') >= 2  # both sides' images of a top row
    assert_rendered(html, (1200, 1800), tmp_path, Path("/tmp/evalq-compare-test.png"))
