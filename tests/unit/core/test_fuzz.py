"""Hypothesis fuzzing: whatever a dataset file or a judge reply holds, nothing but evalq's own
errors escapes the loader and the parsers."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalq.core.dataset import LoadedDataset, load_dataset
from evalq.core.errors import EvalqError, InputError
from evalq.core.media import parse_media
from evalq.core.replies import extract_json
from evalq.metrics.gecko.parsing import parse_rubric, parse_yes_no

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
# Text that may hold lone surrogates: JSON carries them as "\\ud800" escapes.
unpaired_text = st.text(
    alphabet=st.one_of(
        st.characters(codec=None, categories=["Cs"]), st.characters(categories=["L", "P"])
    ),
    max_size=8,
)
cells = st.one_of(
    json_values,
    unpaired_text,
    st.lists(st.dictionaries(st.sampled_from(["question", "answer"]), unpaired_text), max_size=2),
    st.sampled_from(
        ["img.png", "", "http://127.0.0.1:9/x", "data:image/png;base64,!!", "gs://b/x"]
    ),
)
rows = st.dictionaries(
    st.sampled_from(["id", "prompt", "image", "questions", "promt", "extra"]), cells, max_size=5
)
fuzz = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def beside_an_image(tmp_path: Path, name: str) -> Path:
    """Where to write a dataset whose rows may name img.png, a PNG written beside it."""
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return tmp_path / name


@fuzz
@given(text=st.text(max_size=400))
def test_reply_parsers_raise_only_evalq_errors(text: str) -> None:
    for parser in (parse_yes_no, parse_rubric, extract_json):
        with contextlib.suppress(EvalqError):
            parser(text)


@fuzz
@given(value=json_values)
def test_parsers_on_json_shaped_replies(value: Any) -> None:
    text = json.dumps(value)
    for candidate in (text, f"```json\n{text}\n```", f"Here you go: {text} done"):
        for parser in (parse_yes_no, parse_rubric):
            with contextlib.suppress(EvalqError):
                parser(candidate)


@fuzz
@given(
    records=st.lists(st.one_of(rows, st.text(max_size=40)), max_size=6),
    suffix=st.sampled_from([".jsonl", ".csv", ".txt"]),
)
def test_dataset_loader_raises_only_evalq_errors(
    tmp_path: Path, records: list[Any], suffix: str
) -> None:
    path = beside_an_image(tmp_path, f"data{suffix}")
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines))
    try:
        loaded = load_dataset(path)
    except EvalqError:
        return
    assert all(isinstance(e, InputError) for _, e in loaded.errors)
    assert loaded.total == len(loaded.rows) + len(loaded.errors)
    assert_storable(loaded)


def assert_storable(loaded: LoadedDataset) -> None:
    """What a load returns is what submit stores as JSON: rows, errors and warnings."""
    for row in loaded.rows:
        row.model_dump_json()
    for _, error in loaded.errors:
        str(error).encode("utf-8")
    for warning in loaded.warnings:
        warning.encode("utf-8")


# CSV cells full of what CSV must quote: delimiters, quotes, line ends of every kind.
csv_text = st.text(
    alphabet=st.one_of(st.sampled_from(list('",\n\r \t;')), st.characters(codec="utf-8")),
    max_size=30,
)


@fuzz
@given(prompts=st.lists(csv_text.filter(str.strip), min_size=1, max_size=6))
def test_csv_written_by_the_csv_module_reads_back_cell_for_cell(
    tmp_path: Path, prompts: list[str]
) -> None:
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(["id", "prompt", "image"])
    starts = []
    for i, prompt in enumerate(prompts):
        starts.append(len(io.StringIO(out.getvalue(), newline="").readlines()) + 1)
        writer.writerow([f"r{i}", prompt, "img.png"])
    path = beside_an_image(tmp_path, "data.csv")
    path.write_text(out.getvalue(), encoding="utf-8", newline="")
    loaded = load_dataset(path)
    assert not loaded.errors
    assert loaded.warnings == []  # well-formed quoting is never reported as swallowed lines
    assert [r.prompt for r in loaded.rows] == [p.strip() for p in prompts]
    assert [r.line for r in loaded.rows] == starts


@fuzz
@given(body=st.lists(csv_text, max_size=6))
def test_csv_loader_on_hostile_text(tmp_path: Path, body: list[str]) -> None:
    path = beside_an_image(tmp_path, "data.csv")
    text = "id,prompt,image\n" + "\n".join(f"{i},{cell},img.png" for i, cell in enumerate(body))
    path.write_text(text, encoding="utf-8", newline="")
    try:
        loaded = load_dataset(path)
    except EvalqError:
        return
    physical = len(io.StringIO(text, newline="").readlines())
    assert all(1 < line <= physical for line, _ in loaded.errors)
    assert all(1 < row.line <= physical for row in loaded.rows)
    assert loaded.total == len(loaded.rows) + len(loaded.errors)
    assert_storable(loaded)


@fuzz
@given(data=st.binary(max_size=300))
def test_dataset_loader_on_raw_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "data.jsonl"
    path.write_bytes(data)
    with contextlib.suppress(EvalqError):
        load_dataset(path)


@fuzz
@given(value=cells)
def test_media_cells(tmp_path: Path, value: Any) -> None:
    with contextlib.suppress(EvalqError):
        parse_media(value, tmp_path, "r", "image")


def encodable(text: str) -> bool:
    """UTF-8 encodes every character but a lone surrogate (U+D800..U+DFFF)."""
    return not any(0xD800 <= ord(c) <= 0xDFFF for c in text)


@fuzz
@given(prompts=st.lists(unpaired_text.filter(str.strip), min_size=1, max_size=6))
def test_jsonl_strings_that_cannot_be_stored_fail_only_their_rows(
    tmp_path: Path, prompts: list[str]
) -> None:
    path = beside_an_image(tmp_path, "data.jsonl")
    path.write_text("".join(json.dumps({"prompt": p, "image": "img.png"}) + "\n" for p in prompts))
    loaded = load_dataset(path)
    # JSON joins an escaped high and low surrogate into one character; a lone one stays lone.
    bad = {i for i, p in enumerate(prompts, start=1) if not encodable(json.loads(json.dumps(p)))}
    assert {line for line, _ in loaded.errors} == bad
    assert all(error.field == "prompt" for _, error in loaded.errors)
    assert_storable(loaded)
