"""A job whose every row would fail on its local media (outside the data roots, missing) is
refused before anything is stored, naming the --data-root to give; its dry run exits non-zero
too; a job where only some rows fail runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import bare_env, one_line_refusal, run_evalq
from tests.support.scratch import job_keys


@pytest.fixture
def moved(tmp_path: Path) -> tuple[Path, Path]:
    """Frozen questions written in another folder than their images: (dataset, images)."""
    from evalq.examples.gecko import write_gecko_image_example

    example = write_gecko_image_example(tmp_path / "ex")
    images = example.parent / "images"
    frozen = tmp_path / "frozen" / "q.jsonl"
    frozen.parent.mkdir()
    rows = [json.loads(line) for line in example.read_text().splitlines()]
    lines = [json.dumps(row | {"image": f"../ex/{row['image']}"}) for row in rows]
    frozen.write_text("\n".join(lines) + "\n")
    return frozen, images


def env_on(scratch_url: str) -> dict[str, str]:
    return bare_env() | {"EVALQ_REDIS_URL": scratch_url, "EVALQ_ARCHIVE_URL": "off"}


def test_every_row_outside_the_data_roots_stops_run_and_names_the_data_root(
    moved: tuple[Path, Path], scratch_url: str, tmp_path: Path
) -> None:
    frozen, images = moved
    env = env_on(scratch_url)
    ran = run_evalq(env, "run", "gecko-image", str(frozen), cwd=tmp_path)
    assert ran.returncode == 2, ran.stderr
    said = one_line_refusal(ran)
    assert said.startswith("error: every row would fail on its media (line 1: row ")
    assert said.endswith(
        f"18 rows name files outside the allowed data roots ({frozen.parent}): give "
        f"--data-root {images} (data_roots=[...] in Python); no job is stored"
    )
    assert job_keys(scratch_url) == []  # nothing stored

    dry = run_evalq(env, "run", "gecko-image", str(frozen), "--dry-run", "--json", cwd=tmp_path)
    assert dry.returncode == 2, dry.stderr
    assert json.loads(dry.stdout)["refusal"] == said.removeprefix("error: ")

    fixed = ["run", "gecko-image", str(frozen), "--data-root", str(images)]
    planned = run_evalq(env, *fixed, "--dry-run", "--json", cwd=tmp_path)
    assert planned.returncode == 0, planned.stderr
    assert json.loads(planned.stdout)["rows_planned"] == 18
    assert json.loads(planned.stdout)["refusal"] is None


def test_missing_media_everywhere_is_refused_and_some_missing_runs(
    moved: tuple[Path, Path], scratch_url: str, tmp_path: Path
) -> None:
    frozen, images = moved
    env = env_on(scratch_url)
    gone = tmp_path / "gone.jsonl"
    gone.write_text('{"id": "a", "prompt": "p", "image": "nowhere.png"}\n')
    ran = run_evalq(env, "run", "gecko-image", str(gone), cwd=tmp_path)
    assert ran.returncode == 2, ran.stderr
    assert one_line_refusal(ran) == (
        "error: every row would fail on its media (line 1: row a: field 'image': file not "
        f"found: nowhere.png); 1 rows name files that are not there (relative paths start from "
        f"the dataset's folder, {tmp_path}); no job is stored"
    )
    assert job_keys(scratch_url) == []

    some = frozen.parent / "some.jsonl"
    lines = frozen.read_text().splitlines()
    some.write_text("\n".join([*lines[:2], '{"id": "b", "prompt": "p", "image": "x.png"}']) + "\n")
    args = ["run", "gecko-image", str(some), "--data-root", str(images.parent.parent)]
    dry = run_evalq(env, *args, "--dry-run", "--json", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert (json.loads(dry.stdout)["rows_planned"], json.loads(dry.stdout)["refusal"]) == (2, None)
    ran = run_evalq(env, *args, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert job_keys(scratch_url)  # stored: two rows to judge, one failed at load
