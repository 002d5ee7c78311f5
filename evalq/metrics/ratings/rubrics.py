"""The built-in rating rubrics: what a rating job judges with when it names no template file.

A built-in rubric is ours: a metric definition, criteria, a five-level scale and the inputs it
reads. Pointwise prompts rate one response on that scale; pairwise prompts reuse the same
definition and criteria to compare two responses (evalq.metrics.ratings.templates wraps a
rubric or a user's file; evalq.metrics.ratings.prompts words the prompts).

Versions are part of each prompt's identity (the call cache is keyed by the prompt text, and
results record the version), so bump one whenever its wording changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

from evalq.core.errors import DatasetError

DOCUMENT = "document"


@dataclass(frozen=True)
class InputSpec:
    """A column a rubric shows the judge, with the heading it appears under."""

    column: str
    label: str


@dataclass(frozen=True)
class RatingRubric:
    """A built-in rubric. ``requires`` lists groups of columns: each group needs one of them."""

    name: str
    version: str
    title: str
    definition: str
    criteria: tuple[tuple[str, str], ...]
    scale: tuple[tuple[int, str], ...]  # (rating, description), 5 down to 1
    inputs: tuple[InputSpec, ...]
    requires: tuple[tuple[str, ...], ...]


_PROMPT = InputSpec("prompt", "Instruction given to the AI")
_QUESTION = InputSpec("prompt", "Question")
_CONTEXT = InputSpec("context", "Context")
_SOURCE = InputSpec("context", "Source text")
_DOCUMENT = InputSpec(DOCUMENT, "Document")
_REFERENCE = InputSpec("reference", "Reference answer (written by a person; may be imperfect)")
_RESPONSE = InputSpec("response", "Response to rate")

BUILTIN_RUBRICS: dict[str, RatingRubric] = {
    rubric.name: rubric
    for rubric in (
        RatingRubric(
            name="summarization_quality",
            version="summarization_quality/2",
            title="Summarisation quality",
            definition=(
                "How well the response summarises the source: the context and/or the document, "
                "or, when there is neither, the text given with the instruction. It keeps what "
                "matters, stays faithful to the source, does what the instruction asks (length, "
                "focus, audience), and is clearly shorter than the source."
            ),
            criteria=(
                (
                    "Faithfulness",
                    "every statement is supported by the source; nothing is invented, "
                    "exaggerated or contradicted.",
                ),
                (
                    "Coverage",
                    "the main points of the source, and any the instruction asks for, are kept.",
                ),
                (
                    "Instruction following",
                    "length, format and focus are as the instruction asks.",
                ),
                ("Concision", "no padding, repetition or detail that does not earn its place."),
                ("Clarity", "well organised and easy to read."),
            ),
            scale=(
                (5, "faithful, covers the main points, follows the instruction, concise, clear."),
                (4, "faithful and follows the instruction, but misses a minor point or rambles."),
                (3, "mostly faithful, but misses an important point or half-follows the request."),
                (2, "has unsupported or wrong statements, or leaves out most of what matters."),
                (1, "not a summary of this source: invented, off-topic, or ignores the request."),
            ),
            inputs=(
                InputSpec(
                    "prompt", "Instruction given to the AI (it may hold the text to summarise)"
                ),
                _SOURCE,
                _DOCUMENT,
                InputSpec("response", "Summary to rate"),
            ),
            # Vertex's and the seed's summarisation data put the instruction and the text in
            # the prompt, with no context column: the prompt alone can carry the source.
            requires=(("context", DOCUMENT, "prompt"), ("response",)),
        ),
        RatingRubric(
            name="question_answering_quality",
            version="question_answering_quality/1",
            title="Question answering quality",
            definition=(
                "How well the response answers the question: correct, complete, to the point, "
                "consistent with the context or document when one is given (and with the "
                "reference answer when one is given), and clearly written."
            ),
            criteria=(
                ("Correctness", "what it states is true, and agrees with the given material."),
                ("Completeness", "it answers every part of the question in enough detail."),
                ("Relevance", "it answers the question asked, without drifting off it."),
                (
                    "Groundedness",
                    "when a context or document is given, the answer relies on it and adds "
                    "nothing it does not support.",
                ),
                ("Clarity", "well organised and easy to read."),
            ),
            scale=(
                (5, "correct, complete, relevant, grounded and clear."),
                (4, "correct and relevant, but a little incomplete or not very clear."),
                (3, "partly answers the question, or has a minor error or unsupported claim."),
                (2, "mostly fails to answer: major errors, omissions or unsupported claims."),
                (1, "does not answer the question, or is wrong throughout."),
            ),
            inputs=(
                _QUESTION,
                _CONTEXT,
                _DOCUMENT,
                _REFERENCE,
                InputSpec("response", "Answer to rate"),
            ),
            requires=(("prompt",), ("response",)),
        ),
        RatingRubric(
            name="groundedness",
            version="groundedness/1",
            title="Groundedness",
            definition=(
                "Whether every claim in the response is supported by the context and/or the "
                "document. Only support matters here: not style, not completeness, and not "
                "whether a claim is true in the world if the source does not say it."
            ),
            criteria=(
                ("Support", "each factual claim can be traced to the source."),
                ("No contradiction", "nothing in the response contradicts the source."),
                (
                    "No outside knowledge",
                    "the response adds no facts the source lacks (polite phrases and restating "
                    "the question are not claims).",
                ),
            ),
            scale=(
                (5, "every claim is supported by the source."),
                (4, "all substantive claims are supported; a minor detail is loosely supported."),
                (3, "mostly supported, but at least one claim is not in the source."),
                (2, "several claims are unsupported, or one contradicts the source."),
                (1, "mostly unsupported by the source, or contradicts it."),
            ),
            inputs=(InputSpec("prompt", "User request"), _CONTEXT, _DOCUMENT, _RESPONSE),
            requires=(("context", DOCUMENT), ("response",)),
        ),
        RatingRubric(
            name="instruction_following",
            version="instruction_following/1",
            title="Instruction following",
            definition=(
                "How completely the response does what the instruction asks, including its "
                "constraints on length, format, language, tone and content. Facts matter only "
                "where the instruction makes them matter."
            ),
            criteria=(
                ("Task", "it performs the task the instruction sets."),
                ("Constraints", "it keeps every explicit constraint (length, format, style)."),
                ("Nothing extra", "it adds nothing the instruction rules out."),
            ),
            scale=(
                (5, "does everything asked and keeps every constraint."),
                (4, "does the task; one minor constraint is loosely kept."),
                (3, "does the main task but misses an explicit constraint."),
                (2, "does only part of the task, or breaks several constraints."),
                (1, "does not do what was asked."),
            ),
            inputs=(_PROMPT, _CONTEXT, _DOCUMENT, _RESPONSE),
            requires=(("prompt",), ("response",)),
        ),
        RatingRubric(
            name="fluency",
            version="fluency/1",
            title="Fluency",
            definition=(
                "How readable the response is as writing: grammar, word choice, sentence flow "
                "and organisation. Correctness and relevance are not judged here."
            ),
            criteria=(
                ("Grammar", "sentences are grammatical and correctly punctuated."),
                ("Word choice", "words are apt; no awkward repetition."),
                ("Flow", "sentences connect; the text is organised and easy to follow."),
            ),
            scale=(
                (5, "reads naturally; no errors worth noting."),
                (4, "reads well; a few small slips."),
                (3, "understandable, but awkward or with noticeable errors."),
                (2, "hard to read: frequent errors or broken sentences."),
                (1, "barely readable."),
            ),
            inputs=(_RESPONSE,),
            requires=(("response",),),
        ),
        RatingRubric(
            name="coherence",
            version="coherence/1",
            title="Coherence",
            definition=(
                "Whether the response's ideas hang together: a clear line of thought, each "
                "part following from or building on the last, no contradictions or jumps."
            ),
            criteria=(
                ("Structure", "it has a recognisable order (setup, points, conclusion)."),
                ("Consistency", "it does not contradict itself."),
                ("Progression", "each sentence follows from the previous ones."),
            ),
            scale=(
                (5, "a clear, consistent line of thought from start to end."),
                (4, "coherent, with a small jump or loose end."),
                (3, "the main line is followable, but parts are disconnected."),
                (2, "mostly disconnected statements, or a contradiction."),
                (1, "no discernible line of thought."),
            ),
            inputs=(_PROMPT, _RESPONSE),
            requires=(("response",),),
        ),
    )
}


def rubric_line(rubric: RatingRubric) -> str:
    """What a built-in rubric judges and the columns it reads, in one line (`evalq run
    --help`, docs/guides/your-own-data.md): its definition's first clause, then the columns, those it needs
    (one of each group) named apart."""
    what = rubric.definition.split(":")[0].split(". ")[0].split(", ")[0].rstrip(".")
    reads = ", ".join(spec.column for spec in rubric.inputs)
    groups = sorted(rubric.requires, key=len)
    needs = " and ".join(g[0] if len(g) == 1 else "one of " + "/".join(g) for g in groups)
    return f"{what}. Reads {reads}; needs {needs}."


def rubric_listing() -> tuple[tuple[str, str], ...]:
    """Every built-in rubric's name and line, in the order they are defined."""
    return tuple((name, rubric_line(rubric)) for name, rubric in BUILTIN_RUBRICS.items())


VERTEX_PAIRWISE = "pairwise_"  # Vertex names a rubric's pairwise form pairwise_NAME


def builtin_rubric(name: str, kind: str = "pointwise") -> RatingRubric:
    """The built-in rubric `name` names, Vertex's `pairwise_NAME` understood for a pairwise
    job; else the refusal that says what was meant: a file that is not there, the pointwise
    name of a pairwise one, a near miss."""
    from evalq.core.near_miss import did_you_mean

    base = name.removeprefix(VERTEX_PAIRWISE)
    if base != name and base in BUILTIN_RUBRICS:
        if kind == "pairwise":
            return BUILTIN_RUBRICS[base]
        raise DatasetError(
            f"template {name!r} is Vertex's name for the pairwise form of {base!r}: give "
            f"--template {base} (with `evalq run pairwise` too)"
        )
    rubric = BUILTIN_RUBRICS.get(name)
    if rubric is not None:
        return rubric
    listed = f"built-in templates: {', '.join(BUILTIN_RUBRICS)}"
    if "/" in name or "\\" in name or PurePath(name).suffix:
        raise DatasetError(
            f"template file {name!r} not found (a relative path starts from the folder the "
            f"command runs in); give a file that exists, or a built-in template ({listed})"
        )
    hint = did_you_mean(base, BUILTIN_RUBRICS)
    raise DatasetError(f"unknown template {name!r}{hint}; {listed} (or give a template file)")
