"""The simulated judge's skill for the rubric metric: it writes plausible pass/fail tests for a
text prompt (its main words, a word limit or a list it asks for, whole sentences, no abuse) and
checks a response against each test from the words the response contains."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from evalq.fake_gemini.prompt_grammar import (
    RUBRIC_PROMPT,
    RUBRIC_RESPONSE,
    RUBRIC_TEST,
    RUBRIC_TESTS,
    block,
)
from evalq.fake_gemini.skills.groundedness import stem, tokens

if TYPE_CHECKING:
    from evalq.fake_gemini.protocol import FakeRequest, SeesImages

LABEL = "[simulated judge]"
TOPIC_WORDS = 3  # "mentions X" tests per prompt, its longest content words

_STOP_TEXT = """a an the and or but if so as of to in on at by for with from into about over under than
    that this these those it its is are was were be been do does did have has had can could would
    should will may might must not no also just only very more most what which who whom when
    where why how all any each every some please write give tell explain describe list make
    reply answer response words word sentence sentences short brief me my you your our we us
    i using use one two three four five about"""
_STOP = frozenset(_STOP_TEXT.split())
_LIMIT_RE = re.compile(r"\b(?:under|in|at most|no more than|fewer than|within)\s+(\d+)\s+words?\b")
_MENTIONS_RE = re.compile(r"^The response mentions (?P<word>.+?)\.?$")
_UNDER_RE = re.compile(r"^The response is under (?P<n>\d+) words\.?$")
_ABUSE = frozenset({"idiot", "stupid", "hate", "kill", "dumb", "shut"})
_LIST_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+", re.MULTILINE)


def _test(test: str, tag: str, importance: str, why: str) -> dict[str, str]:
    return {"test": test, "tag": tag, "importance": importance, "justification": f"{LABEL} {why}"}


def write_tests(prompt: str) -> dict[str, list[dict[str, str]]]:
    """Tests for a prompt: its topic words, the form it asks for, whole sentences, no abuse."""
    lowered = prompt.lower()
    words = [w for w in dict.fromkeys(tokens(prompt)) if w not in _STOP and len(w) > 2]
    topic = sorted(words, key=lambda w: (-len(w), words.index(w)))[:TOPIC_WORDS]
    tests = [
        _test(f"The response mentions {w}.", "content", "high", f"the prompt is about {w}")
        for w in sorted(topic, key=words.index)
    ]
    if limit := _LIMIT_RE.search(lowered):
        n = limit.group(1)
        tests.append(
            _test(
                f"The response is under {n} words.",
                "instruction_following",
                "high",
                f"the prompt asks for at most {n} words",
            )
        )
    if re.search(r"\b(list|bullet|bullets|steps)\b", lowered):
        tests.append(
            _test("The response is a list.", "format", "medium", "the prompt asks for a list")
        )
    tests.append(
        _test(
            "The response is written in complete sentences.",
            "style",
            "low",
            "a reader expects whole sentences",
        )
    )
    tests.append(
        _test(
            "The response contains no abusive language.",
            "safety",
            "medium",
            "a reply must never insult its reader",
        )
    )
    return {"tests": tests}


def check_test(test: str, response: str) -> tuple[str, str]:
    """("yes" or "no", why) for one test, from the words of the response."""
    said = tokens(response)
    stems = {stem(w) for w in said}
    if m := _MENTIONS_RE.match(test.strip()):
        word = m["word"].strip()
        found = all(stem(w) in stems for w in tokens(word))
        return (
            "yes" if found else "no"
        ), f"the response {'uses' if found else 'never uses'} the word {word!r}"
    if m := _UNDER_RE.match(test.strip()):
        n = int(m["n"])
        return (
            "yes" if len(said) < n else "no"
        ), f"the response has {len(said)} words; the limit is {n}"
    if "is a list" in test:
        items = len(_LIST_LINE.findall(response))
        return ("yes" if items >= 2 else "no"), f"the response has {items} list items"
    if "complete sentences" in test:
        whole = response.rstrip().endswith((".", "!", "?"))
        return (
            "yes" if whole else "no"
        ), f"the response {'ends' if whole else 'does not end'} a sentence"
    if "abusive" in test:
        bad = sorted(_ABUSE & set(said))
        return (
            ("no", f"the response says {', '.join(bad)}")
            if bad
            else ("yes", "no abusive word found")
        )
    wanted = [w for w in tokens(test) if w not in _STOP and len(w) > 2]
    if not wanted:
        return "yes", "the test names nothing to look for"
    share = sum(stem(w) in stems for w in wanted) / len(wanted)
    found = share >= 0.5
    return ("yes" if found else "no"), f"{share:.0%} of the test's words appear in the response"


def answer(request: FakeRequest, judge: SeesImages) -> str | None:
    text = request.text
    response = block(text, RUBRIC_RESPONSE)
    if response is not None and (one := block(text, RUBRIC_TEST)) is not None:
        verdict, why = check_test(one, response)
        if request.response_schema is None:
            return f"{LABEL} {why}\nVerdict: {verdict}"
        return json.dumps({"explanation": f"{LABEL} {why}", "answer": verdict})
    if response is not None and (many := block(text, RUBRIC_TESTS)) is not None:
        answers = []
        for number, line in enumerate(many.splitlines(), start=1):
            verdict, why = check_test(re.sub(r"^\d+\.\s*", "", line), response)
            answers.append(
                {"question_id": number, "explanation": f"{LABEL} {why}", "answer": verdict}
            )
        return json.dumps({"answers": answers})
    if (prompt := block(text, RUBRIC_PROMPT)) is not None and response is None:
        return json.dumps(write_tests(prompt))
    return None
