"""Hypothesis fuzzing: whatever a dataset file or a judge reply holds, nothing but evalq's own
errors escapes the loader and the parsers."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalq.dataset import load_dataset
from evalq.errors import EvalqError, InputError
from evalq.media import parse_media
from evalq.parsing import extract_json, parse_rubric, parse_yes_no

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
cells = st.one_of(
    json_values,
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
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    path = tmp_path / f"data{suffix}"
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines))
    try:
        loaded = load_dataset(path)
    except EvalqError:
        return
    assert all(isinstance(e, InputError) for _, e in loaded.errors)
    assert loaded.total == len(loaded.rows) + len(loaded.errors)


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
