"""Script rules for the fake Gemini server: strict loading, first-match-wins, ``times``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from devtools.local import ROOT
from evalq.fake_gemini.script import Script, ScriptError, load_script, parse_rules
from evalq.fake_gemini.server import create_app


class NeverAsked:
    def reply(self, request: object) -> str:
        raise AssertionError("the brain should not be asked")


def write_script(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "script.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_load_skips_blank_and_comment_lines_and_numbers_rules(tmp_path: Path) -> None:
    path = write_script(
        tmp_path,
        "# canned answers",
        json.dumps({"match": "a", "reply": "A"}),
        "",
        json.dumps({"match": "b", "status": 429, "quota": "day", "retry_delay_s": 2.5}),
        json.dumps({"match": "c", "finish_reason": "SAFETY", "delay_ms": 5, "times": 2}),
    )
    first, second, third = load_script(path)
    assert (first.index, first.reply) == (0, "A")
    assert (second.index, second.status, second.quota, second.retry_delay_s) == (1, 429, "day", 2.5)
    assert (third.index, third.finish_reason, third.delay_ms, third.times) == (2, "SAFETY", 5, 2)


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        ('{"match": "a", "reply": ', "invalid JSON"),
        ('["not", "an", "object"]', "JSON object"),
        ('{"reply": "x"}', "'match'"),
        ('{"match": "(", "reply": "x"}', "not a valid regex"),
        ('{"match": "a", "reply": "x", "colour": "red"}', "unknown field"),
        ('{"match": "a"}', "rule does nothing"),
        ('{"match": "a", "times": 2}', "rule does nothing"),
        ('{"match": "a", "status": 418}', "'status'"),
        ('{"match": "a", "reply": "x", "status": 503}', "cannot be combined"),
        ('{"match": "a", "status": 503, "retry_delay_s": 3}', "only apply to status 429"),
        ('{"match": "a", "status": 429, "quota": "hour"}', "'quota'"),
        ('{"match": "a", "reply": "x", "finish_reason": "SAFETY"}', "drop 'reply'"),
        ('{"match": "a", "finish_reason": "SAFTEY"}', "'finish_reason'"),
        ('{"match": "a", "block_reason": "SAFETY", "finish_reason": "STOP"}', "cannot be combined"),
        ('{"match": "a", "reply": "x", "times": 0}', "'times'"),
        ('{"match": "a", "delay_ms": -1}', "'delay_ms'"),
    ],
)
def test_bad_rules_fail_naming_the_line(tmp_path: Path, line: str, complaint: str) -> None:
    path = write_script(tmp_path, "# header", json.dumps({"match": "ok", "reply": "ok"}), line)
    with pytest.raises(ScriptError) as caught:
        load_script(path)
    assert f"{path}:3:" in str(caught.value)
    assert complaint in str(caught.value)


def test_missing_file_is_a_script_error(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="cannot read script"):
        load_script(tmp_path / "absent.jsonl")


def test_posted_rules_name_the_rule_index() -> None:
    with pytest.raises(ScriptError, match="rule 1: unknown field"):
        parse_rules([{"match": "a", "reply": "x"}, {"match": "b", "reply": "y", "oops": 1}])
    with pytest.raises(ScriptError, match="JSON list"):
        parse_rules({"match": "a"})


def test_first_live_match_wins_across_lines() -> None:
    script = Script(
        parse_rules(
            [
                {"match": "hello.*world", "reply": "first", "times": 1},
                {"match": "world", "reply": "second"},
            ]
        )
    )
    first = script.take("hello\nbig world")  # DOTALL: '.' crosses the newline
    assert first is not None and first.reply == "first"
    second = script.take("hello\nbig world")  # rule 0 is used up
    assert second is not None and second.reply == "second"
    assert script.take("no match here") is None
    assert script.fired == {0: 1, 1: 1}

    script.reset()
    again = script.take("hello world")
    assert again is not None and again.reply == "first"


def test_replacing_rules_resets_fired_counts() -> None:
    script = Script(parse_rules([{"match": "a", "reply": "x"}]))
    script.take("a")
    script.replace(parse_rules([{"match": "b", "reply": "y"}, {"match": "c", "reply": "z"}]))
    assert script.fired == {0: 0, 1: 0}


def test_create_app_rejects_a_bad_script_before_serving(tmp_path: Path) -> None:
    from evalq.fake_gemini.options import ServerOptions

    path = write_script(tmp_path, '{"match": "a", "status": 200}')
    with pytest.raises(ScriptError, match=":1:"):
        create_app(NeverAsked(), ServerOptions(script=path))


def test_cli_exits_with_the_bad_line(tmp_path: Path) -> None:
    path = write_script(tmp_path, json.dumps({"match": "a", "reply": "x"}), "{broken")
    result = subprocess.run(
        [sys.executable, "-m", "evalq.fake_gemini", "--port", "0", "--script", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert f"{path}:2: invalid JSON" in result.stderr


def test_batch_state_rules_end_batches_and_take_no_other_action() -> None:
    from evalq.fake_gemini.script import Script, ScriptError, parse_rules

    (rule,) = parse_rules([{"match": "x", "batch_state": "EXPIRED", "times": 1}])
    assert rule.batch_state == "EXPIRED"
    for bad in (
        {"match": "x", "batch_state": "SUCCEEDED"},
        {"match": "x", "batch_state": "FAILED", "reply": "yes"},
    ):
        try:
            parse_rules([bad])
        except ScriptError:
            continue
        raise AssertionError(f"accepted {bad}")
    script = Script([rule])
    assert script.take("x") is None  # never a single call's answer
    assert script.take_batch_end(["a", "x"]) is rule
    assert script.take_batch_end(["x"]) is None  # times: 1


def test_a_recorded_200_body_is_replayed_as_it_is() -> None:
    recorded = {"candidates": [{"content": {}, "finishReason": "STOP"}], "modelVersion": "m"}
    rule = parse_rules([{"match": "a", "status": 200, "body": recorded}])[0]
    assert (rule.status, rule.body) == (200, recorded)
    with pytest.raises(ScriptError, match="200 or an HTTP error code"):
        parse_rules([{"match": "a", "status": 302, "body": recorded}])
