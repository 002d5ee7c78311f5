"""What a dry run counts for a Gecko row, built as plan and run_unit would build it: the rubric
call (unless the row's questions replace it, it is cached, or an earlier row with the same
prompt writes it) and the validator calls, with the answer lengths a dry run assumes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import product

from evalq.core.dry_run import DryEnv, expected_questions
from evalq.core.judge import JudgeRequest, MediaPart
from evalq.core.models import (
    Question,
    RowInput,
    Rubric,
)
from evalq.core.repeats import SAMPLED_TEMPERATURE, budget_of
from evalq.metrics.gecko.judges import (
    rubric_model,
)
from evalq.metrics.gecko.modes import questions_mode, validator_mode
from evalq.metrics.gecko.rubric import RubricSpec, rubric_cache_id
from evalq.metrics.gecko.validation import ValidatorSpec

# Answers' lengths a dry run assumes (evalq's own figures, from the replies' JSON shapes): a
# rubric is its keywords plus one question with keywords and justification each; a validator
# answer is a short explanation and the answer.
RUBRIC_ANSWER_TOKENS = 40
RUBRIC_TOKENS_PER_QUESTION = 60
VALIDATOR_ANSWER_TOKENS = 50
BATCH_TOKENS_PER_QUESTION = 45


def dry_questions(
    row: RowInput, env: DryEnv, spec: RubricSpec, placeholder: Callable[[str], Question]
) -> list[Question]:
    """The questions the row's validators will be asked (placeholders for a rubric still to
    write), counting the rubric call when this row is the one to write it."""
    extend = questions_mode(env.options) == "extend"
    if row.questions and not extend:
        env.count("rubrics_given")
        return list(row.questions)
    model = rubric_model(env.job)
    key = rubric_cache_id(row.prompt, model, spec.template_version)
    cached = env.cached(key)
    if cached is not None:
        questions = Rubric.model_validate_json(cached).questions
        env.count("rubrics_cached")
    else:
        keywords = expected_questions(row.prompt)
        questions = [placeholder(k) for k in keywords]
        env.count("questions_estimated", len(questions))
        if env.first(key):
            request = JudgeRequest(
                prompt=spec.prompt(row.prompt, None), schema=spec.schema, role="rubric"
            )
            answer = RUBRIC_ANSWER_TOKENS + RUBRIC_TOKENS_PER_QUESTION * len(questions)
            env.call(request, model, answer)
            env.count("rubrics_to_write")
        else:
            env.count("rubrics_shared")  # written once for an earlier row's prompt
    return questions + list(row.questions or [])


def dry_validations(
    env: DryEnv, questions: Sequence[Question], media: MediaPart, spec: ValidatorSpec
) -> None:
    """Per judge, one validator call per question, or one per row in batched mode."""
    for model in env.job.judges:
        if validator_mode(env.options) == "batched":
            answer = BATCH_TOKENS_PER_QUESTION * len(questions)
            env.call(spec.batch_request(questions, media), model, answer)
            continue
        budget = budget_of(env.options.get("samples"))
        for question, sample in product(questions, range(budget.max_samples)):
            request = spec.request(question, media)
            if budget.max_samples > 1:
                request = replace(request, temperature=SAMPLED_TEMPERATURE, sample=sample)
            optional = budget.adaptive and sample >= budget.min_samples  # only while undecided
            env.call(request, model, VALIDATOR_ANSWER_TOKENS, optional=optional)
