"""Which judges --soft refuses at submit, by API, from the recorded refusals
(evalq.metrics.gecko.soft_models), and the --soft switch on the command line."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from evalq.client.cli.metric_flags import job_options, metric_flags
from evalq.metrics.gecko.soft_models import refusal_message, refuses_logprobs


@pytest.mark.parametrize(
    ("model", "vertex", "refuses"),
    [
        ("gemini-2.5-pro", False, True),
        ("models/gemini-2.5-flash", False, True),
        ("gemini-2.5-flash-lite", False, True),
        ("gemini-2.5-pro-preview-03-25", False, True),
        ("gemini-2.0-flash", False, False),
        ("gemini-2.5-pro", True, False),  # Vertex gives them for 2.5 (vercel/ai#5418)
        ("gemini-3.5-flash", True, True),
        ("a-model-evalq-does-not-know", False, False),
    ],
)
def test_the_table_of_refusing_models(model: str, vertex: bool, refuses: bool) -> None:
    assert refuses_logprobs(model, vertex) is refuses


def test_the_refusal_names_the_models_and_the_api_message() -> None:
    message = refusal_message(["gemini-2.0-flash", "gemini-2.5-flash"], vertex=False)
    assert message is not None
    assert "gemini-2.5-flash" in message and "gemini-2.0-flash," not in message
    assert "Logprobs is not enabled for models/gemini-2.5-flash" in message
    assert refusal_message(["gemini-2.0-flash"], vertex=False) is None


def test_soft_is_a_switch_on_the_command_line() -> None:
    seen: list[dict[str, object]] = []

    @click.command(params=metric_flags())
    def command(**values: object) -> None:
        seen.append(job_options(**values))

    assert CliRunner().invoke(command, ["--soft"]).exit_code == 0
    assert CliRunner().invoke(command, []).exit_code == 0
    assert seen == [{"soft": True}, {}]
