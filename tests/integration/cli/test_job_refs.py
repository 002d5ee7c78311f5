"""Jobs by name, through the CLI on real workers with a SQLite archive: a --name (its newest job;
NAME~1 the one before) or a unique id prefix, live or archived; a prefix several jobs fit is refused
listing each, one none fits says where it looked; `evalq jobs` tells two same-named datasets apart."""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from tests.support.archive import forget_in_redis, wait_archived
from tests.support.cli import evalq_ok, refusal_lines, run_evalq
from tests.support.stack import stack

pytestmark = pytest.mark.integration


def flat(text: str) -> str:
    return " ".join(text.split())


def test_jobs_by_name_and_id_prefix_live_and_archived(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalq.examples.ratings import write_pairwise_example, write_pointwise_candidates_example

    a = write_pairwise_example(tmp_path / "data" / "a")  # a/pairwise.jsonl
    b = write_pairwise_example(tmp_path / "data" / "b")  # b/pairwise.jsonl: the same name
    duo_data = write_pointwise_candidates_example(tmp_path / "data" / "c")
    archive = tmp_path / "archive.sqlite"
    with stack(tmp_path / "stack", EVALQ_ARCHIVE_URL=f"sqlite:///{archive}") as s:
        env = s.env(COLUMNS="80")  # refusals are printed unfolded all the same

        def run(*args: str) -> dict[str, Any]:
            summary = json.loads(evalq_ok(env, *args, "--wait", "--json").stdout)
            assert summary["status"] == "finished", summary
            return dict(summary)

        faithful = run("run", "pairwise", str(a), "--name", "faithful")
        sloppy = run("run", "pairwise", str(b), "--name", "sloppy")
        duo = run(
            "run", "pointwise", str(duo_data), "--template", "summarization_quality",
            "--candidates", "faithful,poor", "--name", "duo",
        )  # fmt: skip
        f_id, s_id, d_id = faithful["job_id"], sloppy["job_id"], duo["job_id"]

        def compared(*sides: str) -> dict[str, Any]:
            return dict(json.loads(evalq_ok(env, "compare", *sides, "--json").stdout))

        by_id = compared(f_id, s_id)
        assert [side["label"] for side in by_id["sides"]] == ["faithful", "sloppy"]
        live = compared("faithful", "sloppy")
        assert live == by_id
        assert compared("duo:faithful", "duo:poor") == compared(f"{d_id}:faithful", f"{d_id}:poor")
        labelled = compared("mine=faithful", f"theirs={s_id[:6]}")
        assert [side["label"] for side in labelled["sides"]] == ["mine", "theirs"]
        assert labelled["pairs"] == compared(f"mine={f_id}", f"theirs={s_id}")["pairs"]
        board = json.loads(evalq_ok(env, "leaderboard", "duo", "--json").stdout)
        assert {c["candidate"] for c in board["candidates"]} == {"faithful", "poor"}

        # `evalq jobs` tells the two pairwise.jsonl apart, within 80 columns.
        listed = evalq_ok(env, "jobs").stdout
        assert "a/pairwise.jsonl" in listed and "b/pairwise.jsonl" in listed, listed
        assert "pointwise-candidates.jsonl" in listed and "c/pointwise" not in listed
        assert max(len(line) for line in listed.splitlines()) <= 80 and "…" not in listed

        # Once Redis has forgotten them: the same comparison, found in the archive by name.
        redis = s.redis_client()
        wait_archived(redis, f_id, s_id, d_id)
        assert forget_in_redis(redis, f_id, s_id, d_id) > 0
        assert compared("faithful", "sloppy") == by_id
        assert compared("duo:faithful", "duo:poor")["pairs"]
        status = evalq_ok(env, "status", "sloppy", "--json")
        assert json.loads(status.stdout)["job_id"] == s_id
        assert "from the archive" in flat(status.stderr)
        listed = evalq_ok(env, "jobs").stdout
        assert "a/pairwise.jsonl" in listed and "b/pairwise.jsonl" in listed, listed
        results = evalq_ok(env, "results", s_id[:5], "--format", "jsonl").stdout
        assert len(results.splitlines()) == sloppy["rows_total"]

        # The Python API takes them too.
        import evalq

        api = s.client(archive_url=f"sqlite:///{archive}")
        assert evalq.Job("sloppy", api).summary()["job_id"] == s_id
        assert evalq.Job(f_id[:6], api).job_id == f_id
        result = evalq.compare("faithful", "sloppy", client=api)
        assert (result.overall["a"][0], result.overall["b"][0]) == ("faithful", "sloppy")
        assert result.overall["mean_diff"][0] == by_id["pairs"][0]["overall"]["mean_diff"]

        # A second job named "faithful", live, whose id shares 5 digits with the first's.
        twin_id = f_id[:5] + ("0" if f_id[5] != "0" else "1") + "abcdef"
        ids = (twin_id for _ in count())
        monkeypatch.setattr("evalq.client.submit.new_job_id", lambda: next(ids))
        twin = s.client().submit("pairwise", a, name="faithful").job_id
        assert twin == twin_id
        assert s.client().wait(twin, timeout_s=120).status == "finished"

        # The name passes to the newer job; the older one answers to faithful~1.
        newer = compared("faithful", "sloppy")["sides"][0]["job_id"]
        assert newer == twin
        assert compared("faithful~1", "sloppy") == by_id
        header, *candidates = refusal_lines(run_evalq(env, "status", f_id[:5]))
        assert header.startswith(f"the id prefix '{f_id[:5]}' fits 2 jobs")
        assert [line.split()[0] for line in candidates] == [twin, f_id]
        assert all(line.endswith("pairwise.jsonl  faithful") for line in candidates)

        # A unique prefix (6 digits here; 4 are enough where they are unique) works.
        assert compared(f_id[:6], "sloppy") == by_id
        shortest = next(
            n for n in range(4, 12) if not any(j.startswith(s_id[:n]) for j in (f_id, twin, d_id))
        )
        shown = evalq_ok(env, "status", s_id[:shortest], "--json").stdout
        assert json.loads(shown)["job_id"] == s_id

        # Nothing fits: one line naming the Redis and the archive it looked in.
        (nowhere,) = refusal_lines(run_evalq(env, "compare", "faithful-v9", "sloppy"))
        assert nowhere == (
            f"no job named 'faithful-v9' in Redis at {s.redis.url.split('//')[1].split('/')[0]} "
            f"or the archive at sqlite:///{archive.resolve()}, and 'faithful-v9' is not a job "
            "id (12 hex digits, 0-9 a-f) nor a prefix of one"
        )
        (short,) = refusal_lines(run_evalq(env, "wait", "abc"))
        assert "an id prefix takes at least 4 hex digits" in short
