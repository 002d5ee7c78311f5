"""A pointwise job asked three times per row shows the judge's noise floor in `evalq status`
and `--json`: real Redis, real workers, the fake Gemini server's scripted replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalq.stats.agreement import krippendorff_alpha
from tests.conftest import FakeGemini, RedisServer, WorkerPool, worker_env
from tests.support.cli import evalq_stdout
from tests.support.datasets import write_rows
from tests.support.rating_replies import rated_in_turn

pytestmark = pytest.mark.integration


def test_three_samples_per_row_show_the_noise_floor_in_status_and_json(
    workers: WorkerPool, redis_server: RedisServer, fake: FakeGemini, tmp_path: Path
) -> None:
    fake.script([*rated_in_turn("Nf-split", [5, 3, 4]), *rated_in_turn("Nf-steady", [2])])
    data = write_rows(
        tmp_path / "d.jsonl",
        [{"id": "split", "response": "Nf-split."}, {"id": "steady", "response": "Nf-steady."}],
    )
    env = worker_env(redis_server.url, fake.url, COLUMNS="200")
    common = ["--template", "fluency", "--judge-model", "judge-noise-floor", "--samples", "3"]
    out = evalq_stdout(env, "run", "pointwise", str(data), *common, "--wait", "--json")
    summary = json.loads(out)
    floor = summary["noise_floor"]
    # Three different ratings settle on none: the split row's verdict is undecided.
    assert (floor["units"], floor["samples"], floor["undecided"]) == (2, 6, 1)
    assert floor["split_share"] == 0.5  # the split row's three ratings differ; 2, 2, 2 do not
    assert floor["alpha_level"] == "interval"
    assert floor["alpha"] == pytest.approx(krippendorff_alpha([[5, 3, 4], [2, 2, 2]], "interval"))
    # On the score's scale the split row's samples are 1, 0.5, 0.75 (variance 0.0625, over 3
    # samples); the steady row's do not vary: sqrt(0.0625 / 3) / 2.
    assert floor["mean_score_noise_se"] == pytest.approx((0.0625 / 3) ** 0.5 / 2)
    assert floor["order_disagreement"] is None and floor["panel"] is None

    status = evalq_stdout(env, "status", summary["job_id"])
    assert "judge noise floor" in status
    assert "from 2 repeated units (6 samples), 1 undecided at the maximum" in status
    assert "samples disagree" in status and "0.500 of units" in status
    assert f"{floor['alpha']:.3f} (interval)" in status
    again = json.loads(evalq_stdout(env, "status", summary["job_id"], "--json"))
    assert again["noise_floor"] == floor
