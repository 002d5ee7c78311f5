"""A dry run on Vertex AI says, in the table and in --json (`price_note`), that its prices are the
Gemini API's dated list prices and that Vertex AI bills its own (evalq has no sourced Vertex price
table); a model priced through EVALQ_PRICES is not named, and on the Gemini API nothing is said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalq.core.pricing import PRICE_DATE
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import run_evalq
from tests.support.datasets import write_rows
from tests.support.vertex import VERTEX_ENV as VERTEX

pytestmark = pytest.mark.integration

SAID = f"prices are the Gemini API's list prices (dated {PRICE_DATE}); Vertex AI bills its own"


def test_a_dry_run_on_vertex_says_whose_prices_it_uses(
    redis_server: RedisServer, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    data = write_rows(
        tmp_path / "qa.jsonl",
        [{"id": "1", "prompt": "What causes tides?", "response": "The Moon's pull."}],
    )
    plan = ["run", "pointwise", str(data), "--template", "question_answering_quality"]
    judges = ["--judge-model", "gemini-2.5-flash", "--judge-model", "gemini-2.5-pro"]
    own = {"gemini-2.5-pro": {"input": 1.0, "output": 8.0}}  # as a Vertex user would set it
    vertex = worker_env(
        redis_server.url, fake_gemini.url, COLUMNS="400", EVALQ_PRICES=json.dumps(own), **VERTEX
    )

    table = run_evalq(vertex, *plan, *judges, "--dry-run")
    assert table.returncode == 0, table.stderr
    assert SAID in " ".join(table.stdout.split())  # the cost line, however the table wraps it

    as_json = run_evalq(vertex, *plan, *judges, "--dry-run", "--json")
    assert as_json.returncode == 0, as_json.stderr
    note = json.loads(as_json.stdout)["price_note"]
    assert note.startswith(SAID)
    assert "gemini-2.5-flash" in note and "gemini-2.5-pro" not in note  # EVALQ_PRICES' own

    # On the Gemini API the prices are its own: nothing to say (the API's plan, in-process).
    from evalq.client import Client
    from evalq.worker.settings import Settings

    gemini_api = Client(Settings(redis_url=redis_server.url, api_key=None))
    options = {"template": "question_answering_quality"}
    assert gemini_api.plan("pointwise", data, options=options).price_note is None
