"""A --name given again passes to the newer job; the older ones answer to NAME~1, NAME~2 (and
to their ids), `evalq jobs NAME` lists them all, and `run` says so when it takes a name."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalq.client.jobs.lookup import check_name
from evalq.core.errors import DatasetError
from evalq.core.models import RowInput
from evalq.worker.store import Store
from tests.support.cli import bare_env, run_evalq
from tests.support.job_configs import job_config

NAME = "support v1"


def named_jobs(store: Store, name: str, count: int, first_at: float = 1_700_000_000.0) -> list[str]:
    """`count` jobs called `name`, created a minute apart, the oldest first."""
    ids = []
    for i in range(count):
        job_id = f"{len(name):02x}{i:010x}"
        config = job_config(
            job_id=job_id, name=name, created_at=first_at + 60 * i, dataset=f"d{i}.jsonl"
        )
        store.create_job(config, [RowInput(id="r0", line=1, prompt="p", media={})])
        ids.append(job_id)
    return ids


@pytest.fixture
def env(scratch_url: str) -> dict[str, str]:
    return bare_env() | {"EVALQ_REDIS_URL": scratch_url, "EVALQ_ARCHIVE_URL": "off"}


def shown_id(env: dict[str, str], ref: str, tmp_path: Path) -> str:
    done = run_evalq(env, "status", ref, "--json", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr  # a running job's status is not a failure
    return str(json.loads(done.stdout)["job_id"])


def test_the_newest_job_answers_to_a_name_and_the_older_ones_to_name_tilde_n(
    store: Store, env: dict[str, str], tmp_path: Path
) -> None:
    oldest, middle, newest = named_jobs(store, NAME, 3)
    assert shown_id(env, NAME, tmp_path) == newest
    assert shown_id(env, f"{NAME}~0", tmp_path) == newest
    assert shown_id(env, f"{NAME}~1", tmp_path) == middle
    assert shown_id(env, f"{NAME}~2", tmp_path) == oldest
    assert shown_id(env, oldest, tmp_path) == oldest  # ids still work

    beyond = run_evalq(env, "status", f"{NAME}~3", cwd=tmp_path)
    assert beyond.returncode == 2, beyond.stderr
    assert "3 job(s) are named 'support v1'" in beyond.stderr
    assert "'support v1~2'" in beyond.stderr and "Traceback" not in beyond.stderr

    listed = run_evalq(env, "jobs", NAME, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    order = [next(i for i, line in enumerate(lines) if job in line) for job in (newest, middle)]
    order.append(next(i for i, line in enumerate(lines) if oldest in line))
    assert order == sorted(order)  # the newest first
    handles = [re.split(r"\s{2,}", lines[i + 1].strip())[0] for i in order]
    assert handles == [NAME, f"{NAME}~1", f"{NAME}~2"]


def test_a_name_other_than_the_one_given_stays_apart(
    store: Store, env: dict[str, str], tmp_path: Path
) -> None:
    (only,) = named_jobs(store, "baseline", 1)
    named_jobs(store, "baseline 2", 2, first_at=1_800_000_000.0)
    assert shown_id(env, "baseline", tmp_path) == only
    listed = run_evalq(env, "jobs", "baseline", cwd=tmp_path).stdout
    assert only in listed and "baseline 2" not in listed


def test_a_name_ending_in_tilde_n_is_refused() -> None:
    with pytest.raises(DatasetError, match=r"ends in ~2, which reads as an older job"):
        check_name("support~2")
    assert check_name("support~v2") == "support~v2"


def test_run_says_in_one_line_that_a_name_passes_to_the_new_job(
    store: Store, env: dict[str, str], tmp_path: Path
) -> None:
    (earlier,) = named_jobs(store, NAME, 1)
    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "p", "response": "r"}\n')
    done = run_evalq(
        env, "run", "pointwise", str(data), "--template", "fluency", "--name", NAME, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    new = shown_id(env, NAME, tmp_path)
    (said,) = [line for line in done.stderr.splitlines() if "passes to" in line]
    assert said == (
        f"the name 'support v1' passes to job {new}; job {earlier} answers to 'support v1~1' "
        "(2 jobs have this name: `evalq jobs 'support v1'` lists them)"
    )
    assert shown_id(env, f"{NAME}~1", tmp_path) == earlier


def test_jobs_never_cuts_a_name_mid_word(store: Store, env: dict[str, str], tmp_path: Path) -> None:
    long = "support-replies-after-the-prompt-rewrite v2 final"
    (job,) = named_jobs(store, long, 1)
    listed = run_evalq(env | {"COLUMNS": "80"}, "jobs", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if job in line)
    name_lines = [re.split(r"\s{2,}", line.strip())[0] for line in lines[at + 1 : at + 3]]
    first = name_lines[0]
    assert first.endswith("…") and long.startswith(first.removesuffix("…"))  # an ellipsis
    assert name_lines[1] == "v2 final"  # then the words that fit, whole
