"""Groundedness prompts: the judge's labelling prompt and its one re-ask for unlabelled
sentences, and the request that has the model under test write a response (our guidance, or the
user's --prompt-template). The query, context and response go in blocks the judge is told are
data (evalq.core.prompting). Bump a template's version whenever its wording changes.
"""

from __future__ import annotations

import hashlib
import string

from evalq.core.candidate_request import candidate_request
from evalq.core.errors import DatasetError
from evalq.core.judge import JudgeRequest
from evalq.core.prompting import DATA_RULE, delimit

JUDGE_TEMPLATE_VERSION = "groundedness-judge/2"  # /2: the data rule every metric states
ANSWER_TEMPLATE_VERSION = "groundedness-answer/2"
PLACEHOLDERS = frozenset({"query", "context"})

# The model under test's system instruction; the query and context are the user's message.
ANSWER_GUIDANCE = """Answer the user's request from the context that comes with it, and from
nothing else. Use only what the context states: add no facts from memory or elsewhere, and if
the context does not hold the answer, say so plainly. Write at most five sentences of plain
prose."""

JUDGE_PROMPT = """You audit a response for grounding: every claim it makes must be traceable to
the context document it was written from.

{data_rule}

You get the user's request, the context document, and the response to audit.

Part 1, eligibility. Decide whether the response makes a genuine attempt to answer the request.
It is not eligible when it evades the request, answers a different question, or only declines.
Write the reason in one or two sentences.

Part 2, sentences. Split the response into its sentences, in order, copying each one exactly,
and give each one a label:
- "supported": all that the sentence claims follows from the context. Put in "excerpt" the
  passage of the context that establishes it, copied word for word; separate several passages
  with a new line.
- "contradictory": the context states something that makes the sentence false. Put that
  passage in "excerpt", copied word for word.
- "unsupported": the sentence claims something the context does not establish, including
  claims that are only partly backed or that rest on general knowledge. "excerpt" is null.
- "no_rad": the sentence makes no claim that needs a source (a greeting, thanks, an offer of
  further help, a transition, a question back to the user). "excerpt" is null.
Give each label a short "rationale". Be strict: when you hesitate between "supported" and
"unsupported", choose "unsupported". Do not use knowledge from outside the context.

Reply with JSON only, in this form:
{{"eligibility_rationale": "...", "eligible": true, "sentences": [{{"sentence": "...",
"label": "supported", "rationale": "...", "excerpt": "..."}}]}}

The request:
{query}

The context document:
{context}

The response to audit:
{response}
"""

# The one re-ask for sentences the judge left unlabelled. They come from the response under
# audit, so they travel in an untrusted block like the response itself.
JUDGE_GAP_PROMPT = """{base}
Your earlier audit of this response gave no label to the sentences in the block below, one per
line. Label each of them now as Part 2 asks, copying each sentence exactly. Reply in the same
JSON form; you may leave out the sentences you labelled before.

The sentences still without a label:
{missing}
"""


def template_placeholders(template: str) -> set[str]:
    """The {names} a template uses; raises DatasetError for a template str.format can't read."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise DatasetError(f"--prompt-template: not a valid template: {exc}") from None
    names: set[str] = set()
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if spec or conversion:
            raise DatasetError(
                f"--prompt-template: write placeholders plainly as {{query}} and {{context}}, "
                f"not {{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}"
            )
        names.add(name)
    return names


def check_answer_template(template: str) -> None:
    """A user's answer template must use {query} and {context} and nothing else ({{ }} for
    literal braces); checked before anything is enqueued."""
    names = template_placeholders(template)
    unknown = sorted(names - PLACEHOLDERS)
    if unknown:
        shown = ", ".join("{" + n + "}" for n in unknown)
        raise DatasetError(
            f"--prompt-template: unknown placeholder(s) {shown}; only {{query}} and {{context}} "
            "are filled in (write {{ and }} for literal braces)"
        )
    missing = sorted(PLACEHOLDERS - names)
    if missing:
        shown = " and ".join("{" + n + "}" for n in missing)
        raise DatasetError(f"--prompt-template: the template has no {shown} placeholder")


def answer_request(query: str, context: str, template: str | None = None) -> JudgeRequest:
    """The call to the model under test: our guidance as its system instruction and the query
    and context as the user's message, or the user's own template filled in as written. The
    query is the request it must answer, so it is never fenced off as untrusted."""
    if template is None:
        return candidate_request(ANSWER_GUIDANCE, query, context=context)
    return JudgeRequest(prompt=template.format(query=query, context=context))


def judge_prompt(query: str, context: str, response: str) -> str:
    return JUDGE_PROMPT.format(
        data_rule=DATA_RULE,
        query=delimit("query", query),
        context=delimit("context", context),
        response=delimit("response", response),
    )


def judge_gap_prompt(query: str, context: str, response: str, missing: list[str]) -> str:
    """The judge prompt again, naming the sentences still without a label, one per line."""
    lines = "\n".join(" ".join(sentence.split()) for sentence in missing)
    return JUDGE_GAP_PROMPT.format(
        base=judge_prompt(query, context, response),
        missing=delimit("unlabelled_sentences", lines),
    )


def template_version(template: str | None) -> str:
    if template is None:
        return ANSWER_TEMPLATE_VERSION
    return "user:" + hashlib.sha256(template.encode()).hexdigest()[:12]
