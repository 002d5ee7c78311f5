"""Frozen question sets end to end, through the CLI against real workers and the fake server:
`evalq rubrics` writes every prompt's questions (from the rubric cache and generated), a person
edits one, `run --questions replace` asks exactly what the file says; with the rubric and call
caches flushed, `run --questions-from JOB` asks exactly what that job asked; the refusals of
--questions-from; and `evalq compare` of two jobs asked different questions."""

from __future__ import annotations

import csv
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis

from evalq.comparisons.align import Side
from evalq.comparisons.comparison import compare_sides
from evalq.core.metric import QuestionSetMetric, get_metric
from evalq.core.models import Rubric
from evalq.core.row_questions import question_items
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.archive import forget_in_redis, wait_archived
from tests.support.cli import evalq_long_ok, run_evalq
from tests.support.datasets import png, write_rows
from tests.support.stores import store_of

pytestmark = pytest.mark.integration

EDITED = "Is there anything a person edited by hand here?"


def run_job(env: dict[str, str], *args: str) -> dict[str, Any]:
    """`evalq run ... --wait --json`: the finished job's summary."""
    summary: dict[str, Any] = json.loads(
        evalq_long_ok(env, "run", *args, "--wait", "--json").stdout
    )
    assert summary["status"] == "finished", summary
    return summary


def flush_caches(url: str) -> None:
    """Every cached rubric and judge reply gone, as after their expiry."""
    r = redis.Redis.from_url(url)
    for pattern in ("evalq:rubric:*", "evalq:call:*"):
        if keys := list(r.scan_iter(pattern)):
            r.delete(*keys)
    assert not list(r.scan_iter("evalq:rubric:*"))


def read_file(path: Path) -> list[dict[str, Any]]:
    """The rows of an `evalq rubrics` file, questions as lists (CSV holds them as JSON)."""
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            rows: list[dict[str, Any]] = list(csv.DictReader(handle))
        return [{**r, "questions": json.loads(r["questions"])} for r in rows]
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_file(path: Path, rows: list[dict[str, Any]]) -> None:
    if path.suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows({**r, "questions": json.dumps(r["questions"])} for r in rows)
        return
    write_rows(path, rows)


def questions_asked(client: Any, job_id: str) -> dict[str, list[tuple[str, str, str]]]:
    """Each row's questions as the job asked them: (text, expected answer, tag)."""
    return {
        r.id: [(q.question, q.expected, q.tag) for q in r.questions] for r in client.results(job_id)
    }


def fingerprints(client: Any, job_id: str) -> dict[str, str | None]:
    return {r.id: r.question_set for r in client.results(job_id)}


def freeze_edit_run_reuse(
    client: Any,
    fake: FakeGemini,
    redis_server: RedisServer,
    metric: str,
    dataset: Path,
    out: Path,
    media: str,
) -> tuple[str, str, list[dict[str, Any]]]:
    """The whole path for one Gecko metric; returns (the job run on the edited file, the job
    run with --questions-from it, the file's rows as edited)."""
    env = worker_env(redis_server.url, fake.url, COLUMNS="300")
    model = f"frozen-{metric}-{uuid.uuid4().hex[:8]}"  # no rubric or reply cached for it yet
    spec = get_metric(metric)
    assert isinstance(spec, QuestionSetMetric)
    records = [json.loads(line) for line in dataset.read_text().splitlines()]
    prompts = list(dict.fromkeys(r["prompt"] for r in records))

    # Two prompts' rubrics are in the cache already (another file asked for them), the rest
    # are generated: the report says which, and the tokens the generated ones took.
    subset = write_rows(dataset.parent / "subset.jsonl", records[:2])
    part = evalq_long_ok(env, "rubrics", str(subset), "--out", str(dataset.parent / "part.jsonl"),
               "--rubric-model", model)  # fmt: skip
    assert "2 prompts: 0 from the rubric cache, 2 generated" in part.stdout
    done = evalq_long_ok(env, "rubrics", str(dataset), "--out", str(out), "--rubric-model", model)
    generated = len(prompts) - len(set(prompts) & {r["prompt"] for r in records[:2]})
    assert (
        f"{len(prompts)} prompts: {len(prompts) - generated} from the rubric cache, "
        f"{generated} generated" in done.stdout
    )
    assert "tokens: prompt " in done.stdout and "rubric calls: " in done.stdout
    assert f"evalq run {metric} {out} --questions replace" in done.stdout

    # Every input row with all its columns; media paths name the same files from the file's
    # folder; the questions are the cached rubrics', where workers would find them.
    written = read_file(out)
    assert [r["id"] for r in written] == [r["id"] for r in records]
    for row, record in zip(written, records, strict=True):
        assert set(row) == set(record) | {"questions"}
        assert row["prompt"] == record["prompt"]
        assert (out.parent / row[media]).resolve() == (dataset.parent / record[media]).resolve()
        stored = store_of(client).rubrics().get(spec.rubric_key(row["prompt"], model))
        assert stored is not None
        assert row["questions"] == question_items(Rubric.model_validate_json(stored).questions)
    moved = out.parent.resolve() != dataset.parent.resolve()
    roots = ["--data-root", str(dataset.parent)] if moved else []
    assert (f"the run needs --data-root {dataset.parent.resolve()}" in done.stdout) == moved

    # A person edits one question; the run asks exactly what the file says.
    written[0]["questions"][0]["question"] = EDITED
    write_file(out, written)
    first = run_job(env, metric, str(out), "--questions", "replace", "--judge-model", model,
                    *roots)  # fmt: skip
    first_asked = questions_asked(client, first["job_id"])
    expected = {
        r["id"]: [
            (q["question"], q["answer"].split(")")[0].strip(), q["tag"]) for q in r["questions"]
        ]
        for r in written
    }
    assert first_asked == expected
    assert first_asked[written[0]["id"]][0][0] == EDITED
    assert first["question_set"] is not None
    assert first["rubric_cache_hits"] == 0

    # The rubric and call caches expire; a run on the original dataset with --questions-from
    # asks the first job's questions exactly, the edited one included, and writes no rubric.
    flush_caches(redis_server.url)
    second = run_job(env, metric, str(dataset), "--questions-from", first["job_id"],
                     "--judge-model", model)  # fmt: skip
    assert questions_asked(client, second["job_id"]) == first_asked
    assert fingerprints(client, second["job_id"]) == fingerprints(client, first["job_id"])
    assert second["question_set"] == first["question_set"]
    assert store_of(client).config(second["job_id"]).options["questions_from"] == first["job_id"]
    assert all(store_of(client).rubrics().get(spec.rubric_key(p, model)) is None for p in prompts)

    # Months later: the first job has expired from Redis too (the archive has it, and its
    # questions), and every cache again. --questions-from still asks exactly its questions.
    redis_client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    wait_archived(redis_client, first["job_id"])
    forget_in_redis(redis_client, first["job_id"])
    flush_caches(redis_server.url)
    third = run_job(env, metric, str(dataset), "--questions-from", first["job_id"],
                    "--judge-model", model)  # fmt: skip
    assert questions_asked(client, third["job_id"]) == first_asked
    assert third["question_set"] == first["question_set"]
    return first["job_id"], second["job_id"], written


def test_gecko_image_questions_frozen_edited_and_reused(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    from evalq.examples.gecko import write_gecko_image_example

    dataset = write_gecko_image_example(tmp_path / "example")
    review = tmp_path / "review"
    review.mkdir()
    first, second, written = freeze_edit_run_reuse(
        client, fake, redis_server, "gecko-image", dataset, review / "questions.jsonl", "image"
    )

    # A run on the generated questions against the run on the edited file: one row was asked
    # a different set, and is compared on the questions both asked.
    env = worker_env(redis_server.url, fake.url, COLUMNS="300")
    model = client.config(first).judge_model  # first is in the archive only, by now
    plain = run_job(env, "gecko-image", str(dataset), "--judge-model", model)["job_id"]
    data = json.loads(evalq_long_ok(env, "compare", plain, first, "--json").stdout)
    (pair,) = data["pairs"]
    rows = len(written)
    assert pair["question_sets"] == {
        "paired": rows,
        "identical": rows - 1,
        "common_only": 1,
        "no_common": 0,
        "sentence": f"question sets: {rows - 1} of {rows} paired rows share an identical set; "
        "1 compared on the questions both asked",
    }
    assert pair["counts"]["questions_not_shared"] == 2  # the question before and after its edit
    said = " ".join(evalq_long_ok(env, "compare", plain, first).stdout.split())
    assert pair["question_sets"]["sentence"] in said
    assert "2 questions asked by one side only (left out)" in said
    results_plain, results_first = client.results(plain), client.results(first)
    (paired,) = [
        r
        for r in compare_sides([Side("a", results_plain), Side("b", results_first)]).pairs[0].rows
        if r.row.id == written[0]["id"]
    ]
    assert paired.status == "paired" and paired.question_sets == "common"
    edited_row = next(r for r in results_first if r.id == written[0]["id"])
    kept = [q.result for q in edited_row.questions if q.question != EDITED]
    assert paired.score_b == pytest.approx(sum(kept) / len(kept))  # type: ignore[arg-type]
    # The jobs asked the same questions compare as identical.
    same = json.loads(evalq_long_ok(env, "compare", first, second, "--json").stdout)["pairs"][0]
    assert same["question_sets"]["identical"] == rows


def test_gecko_video_questions_frozen_edited_and_reused_through_csv(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    from evalq.examples.video import write_gecko_video_example

    dataset = write_gecko_video_example(tmp_path / "example")
    out = dataset.parent / "questions.csv"  # beside the dataset: paths stay, no --data-root
    freeze_edit_run_reuse(client, fake, redis_server, "gecko-video", dataset, out, "video")


def test_questions_from_refusals_store_nothing(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    from evalq.examples.video import write_gecko_video_example

    env = worker_env(redis_server.url, fake.url, COLUMNS="300")
    image = tmp_path / "a.png"
    png(image)
    asked_once = write_rows(
        tmp_path / "asked.jsonl",
        [{"id": "r", "prompt": "a red square", "image": "a.png",
          "questions": [{"question": "Is it red?", "answer": "yes"}]}],
    )  # fmt: skip
    source = client.submit("gecko-image", asked_once).job_id
    client.wait(source, timeout_s=60)
    video = write_gecko_video_example(tmp_path / "video")
    new = [{"id": f"n{i}", "prompt": f"a new prompt {i}", "image": "a.png"} for i in range(12)]
    unasked = write_rows(
        tmp_path / "unasked.jsonl", [{"id": "r", "prompt": "a red square", "image": "a.png"}, *new]
    )
    before = store_of(client).list_jobs(100_000)
    cases = [
        (
            ["gecko-video", str(video)],
            f"--questions-from {source}: that job is gecko-image and this one is gecko-video",
        ),
        (
            ["gecko-image", str(unasked)],
            f"--questions-from {source}: 12 row(s) have a prompt that job never asked about: "
            "n0 (line 2), n1 (line 3)",
        ),
        (
            ["pointwise", str(unasked), "--template", "fluency", "--map", "response=prompt"],
            "pointwise does not take --questions-from (options of gecko-image, gecko-video, rubric)",
        ),
    ]
    for args, message in cases:
        done = run_evalq(env, "run", *args, "--questions-from", source)
        assert done.returncode == 2, done.stdout + done.stderr
        assert message in done.stderr
        assert done.stderr.strip().count("\n") == 0, done.stderr  # one line
    assert (
        "n9 (line 11) and 2 more"
        in run_evalq(env, "run", "gecko-image", str(unasked), "--questions-from", source).stderr
    )
    nowhere = run_evalq(env, "run", "gecko-image", str(unasked), "--questions-from", "0" * 12)
    assert nowhere.returncode == 2
    assert nowhere.stderr.strip() == (
        "error: --questions-from 000000000000: no job 000000000000 in Redis or the archive "
        "(never created, or expired)"
    )
    assert store_of(client).list_jobs(100_000) == before


def test_rubrics_names_the_row_whose_prompt_got_no_questions_and_writes_nothing(
    fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    env = worker_env(redis_server.url, fake.url, COLUMNS="300")
    png(tmp_path / "a.png")
    dataset = write_rows(
        tmp_path / "d.jsonl",
        [
            {"id": "fine", "prompt": "a red square", "image": "a.png"},
            {"id": "broken", "prompt": "a zqxv circle", "image": "a.png"},
        ],
    )
    fake.script([{"match": "zqxv", "reply": "I would rather not write questions."}])
    out = tmp_path / "q.jsonl"
    model = f"frozen-broken-{uuid.uuid4().hex[:8]}"
    done = run_evalq(env, "rubrics", str(dataset), "--out", str(out), "--rubric-model", model)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "1 prompt(s) got no question set, nothing was written" in done.stderr
    assert "row broken (line 2): field 'questions'" in done.stderr
    assert "(1 question sets are in the rubric cache" in done.stderr
    assert not out.exists()
