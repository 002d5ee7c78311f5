"""The fake server answers as another version of the same model when told to: the simulated
judge's modelVersion gains "@" and a suffix (still read as simulated), from the start
(--model-version-suffix) or from POST /model-version on; a script rule may name its own."""

from __future__ import annotations

import pytest

from evalq.core.judge import SIMULATED_MODEL_VERSION
from evalq.fake_gemini.__main__ import build_parser
from evalq.fake_gemini.options import ServerOptions
from evalq.fake_gemini.protocol import SCRIPTED_MODEL_VERSION
from evalq.fake_gemini.serving import running_server
from evalq.worker.judges.reply_reading import reply_from_response
from tests.support.fake_calls import EchoBrain, ask, set_script
from tests.support.fake_http import http, make_client


def test_a_suffix_given_at_start_labels_every_simulated_reply() -> None:
    with running_server(brain=EchoBrain(), model_version_suffix="2") as url:
        reply = reply_from_response("gemini-2.5-flash", ask(make_client(url)))
    assert reply.model_version == f"{SIMULATED_MODEL_VERSION}@2"
    assert reply.simulated  # the runtime still knows it for the simulated judge


def test_the_control_route_changes_it_and_reset_brings_back_the_start() -> None:
    with running_server(brain=EchoBrain(), model_version_suffix="1") as url:
        client = make_client(url)
        assert http(url, "/model-version", {"suffix": "7"}) == (
            200,
            {"suffix": "7", "model_version": f"{SIMULATED_MODEL_VERSION}@7"},
        )
        assert ask(client).model_version == f"{SIMULATED_MODEL_VERSION}@7"
        assert http(url, "/model-version", {"suffix": None})[1]["suffix"] is None
        assert ask(client).model_version == SIMULATED_MODEL_VERSION
        assert http(url, "/reset", {})[0] == 200
        assert http(url, "/model-version")[1]["suffix"] == "1"
        for bad in ({"suffix": "a b"}, {"suffix": 3}, {}):
            assert http(url, "/model-version", bad)[0] == 400
        assert ask(client).model_version == f"{SIMULATED_MODEL_VERSION}@1"


def test_scripted_replies_keep_their_version_unless_the_rule_names_one() -> None:
    with running_server(brain=EchoBrain(), model_version_suffix="2") as url:
        set_script(
            url,
            [
                {"match": "canned", "reply": "Paris"},
                {"match": "dated", "reply": "Paris", "model_version": "gemini-2.5-flash-001"},
                {"match": "cut", "finish_reason": "MAX_TOKENS"},  # the brain's text, cut
            ],
        )
        client = make_client(url)
        assert ask(client, "canned").model_version == SCRIPTED_MODEL_VERSION
        assert ask(client, "dated").model_version == "gemini-2.5-flash-001"
        assert ask(client, "cut").model_version == f"{SIMULATED_MODEL_VERSION}@2"
        status, body = http(url, "/script", [{"match": "x", "status": 503, "model_version": "v"}])
        assert status == 400 and "model_version" in str(body)


def test_the_option_is_checked_before_anything_is_served() -> None:
    assert build_parser().parse_args(["--model-version-suffix", "v2.1"]).model_version_suffix == (
        "v2.1"
    )
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--model-version-suffix", "two words"])
    with pytest.raises(ValueError, match="model_version_suffix"):
        ServerOptions(model_version_suffix="x" * 65)
