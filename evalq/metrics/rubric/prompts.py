"""The rubric metric's judge prompts: the rubric model writes pass/fail tests for a text prompt
under guidelines; the validator checks one response against one test, or all of a row's tests.

Untrusted text (the prompt, context, reference, response, and tests a model wrote) goes into
delimited blocks (evalq.core.prompting). Bump a version whenever its template's wording changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evalq.core.prompting import DATA_RULE, delimit
from evalq.metrics.gecko.prompts import RubricGap, numbered

RUBRIC_TEMPLATE_VERSION = "rubric-text-rubric/1"
VALIDATOR_TEMPLATE_VERSION = "rubric-text-validator/1"
BATCH_VALIDATOR_TEMPLATE_VERSION = "rubric-text-batch-validator/1"

TEST_TAGS: tuple[str, ...] = (
    "content",
    "instruction_following",
    "format",
    "style",
    "safety",
    "other",
)
# Medium weighs 1, the weight of a test given without an importance (and of a Gecko question).
IMPORTANCES: dict[str, float] = {"high": 2.0, "medium": 1.0, "low": 0.5}

RUBRIC_PROMPT = """You write pass/fail tests for judging a response to the prompt below.

{data_rule}

Guidelines for the tests:
{guidelines}

Write between 3 and 10 tests. Each test is one statement about a response that a reader can
check as true or false from the response alone ("The response gives a date.", "The response is
under 100 words."), true for an excellent response to this prompt. Do not write the response
yourself and do not judge any response. Give each test:
- "test": the statement;
- "tag": what it checks, one of: {tags};
- "importance": "high", "medium" or "low";
- "justification": one sentence on why a good response must pass it.

Reply with JSON only: {{"tests": [...]}}.

Prompt:
{prompt}
"""

VALIDATOR_PROMPT = """You check whether a response passes one test.

{data_rule}

Read the prompt the response answers{shown}, then the response, and decide whether the
statement in the test is true of the response. Judge only from what the response says. Give
your rationale briefly first, then answer "yes" if the response passes the test and "no" if
it does not.

{texts}
Test:
{test}

Reply with JSON only: {{"explanation": "...", "answer": "yes" or "no"}}.
"""

BATCH_VALIDATOR_PROMPT = """You check whether a response passes each of several tests.

{data_rule}

Read the prompt the response answers{shown}, then the response, and for every numbered test
below decide whether its statement is true of the response. Judge each test on its own and
only from what the response says. Give your rationale briefly for each, then answer "yes" if
the response passes the test and "no" if it does not.

{texts}
Tests:
{tests}

Reply with JSON only, one entry per test, in the order given:
{{"answers": [{{"question_id": 1, "explanation": "...", "answer": "yes" or "no"}}, ...]}}.
"""

# The block each text of a row goes in, in the order the validator reads them.
TEXT_KINDS: tuple[tuple[str, str, str], ...] = (
    ("prompt", "rubric_prompt", "Prompt"),
    ("context", "rubric_context", "Context"),
    ("reference", "rubric_reference", "Reference answer"),
    ("response", "rubric_response", "Response"),
)


def rubric_prompt(guidelines: str, prompt: str, gap: RubricGap | None = None) -> str:
    """The rubric request. Tests check no keywords, so there is never a re-ask (``gap``)."""
    return RUBRIC_PROMPT.format(
        data_rule=DATA_RULE,
        guidelines=guidelines,
        tags=", ".join(TEST_TAGS),
        prompt=delimit("rubric_prompt", prompt),
    )


def _texts(texts: Mapping[str, str]) -> tuple[str, str]:
    """The row's texts in their blocks, and what the instructions say of the optional ones."""
    shown, parts = [], []
    for field, kind, label in TEXT_KINDS:
        value = texts.get(field)
        if value is None:
            continue
        parts.append(f"{label}:\n{delimit(kind, value)}\n")
        if field in ("context", "reference"):
            shown.append("the reference answer" if field == "reference" else "its context")
    said = (" with " + " and ".join(shown)) if shown else ""
    return said, "\n".join(parts)


def validator_prompt(texts: Mapping[str, str], test: str) -> str:
    shown, blocks = _texts(texts)
    return VALIDATOR_PROMPT.format(
        data_rule=DATA_RULE, shown=shown, texts=blocks, test=delimit("rubric_test", test)
    )


def batch_validator_prompt(texts: Mapping[str, str], tests: Sequence[str]) -> str:
    shown, blocks = _texts(texts)
    return BATCH_VALIDATOR_PROMPT.format(
        data_rule=DATA_RULE,
        shown=shown,
        texts=blocks,
        tests=delimit("rubric_tests", numbered(tests)),
    )
