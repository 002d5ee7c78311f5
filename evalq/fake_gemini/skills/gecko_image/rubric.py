"""Writing a Gecko rubric from a description: a question for every mention, property and
relation, so that every keyword is covered by some question; and the re-ask for keywords left
uncovered."""

from __future__ import annotations

from evalq.core.reply_schemas import RubricQuestionReply, RubricReply
from evalq.fake_gemini.skills.gecko_image.reading import Count, Mention, Reading, Relation, read
from evalq.fake_gemini.skills.gecko_image.vocabulary import LABEL, LOCATION_TEXT, RELATION_TEXT

# ---- rubric generation ----------------------------------------------------------------------


def write_rubric(description: str) -> RubricReply:
    """Gecko-style questions for a description: every keyword is covered by some question."""
    reading = read(description)
    questions: list[RubricQuestionReply] = []
    for index in range(len(reading.mentions)):
        questions.extend(_mention_questions(reading, index))
    questions.extend(_relation_question(reading, relation) for relation in reading.relations)
    covered = {keyword for question in questions for keyword in question.keywords}
    questions.extend(
        _question(f"Does the image show {keyword}?", "other", [keyword])
        for keyword in reading.keywords
        if keyword not in covered
    )
    return RubricReply(keywords=reading.keywords, questions=questions)


def fill_gap(rubric: RubricReply, missing: list[str]) -> RubricReply:
    """A re-ask for uncovered keywords: one question for each, as the prompt asks, and only
    keywords that are its own (text in the block naming something else is not obeyed)."""
    wanted = [k.strip() for k in missing if k.strip() in rubric.keywords]
    picked: list[RubricQuestionReply] = []
    for keyword in wanted:
        if any(keyword in q.keywords for q in picked):
            continue
        question = next((q for q in rubric.questions if keyword in q.keywords), None)
        if question is not None:
            picked.append(question)
    return RubricReply(keywords=wanted, questions=picked)


def _question(text: str, tag: str, keywords: list[str]) -> RubricQuestionReply:
    quoted = ", ".join(f"'{keyword}'" for keyword in keywords)
    return RubricQuestionReply.model_validate(
        {
            "question": text,
            "answer": "yes",
            "tag": tag,
            "keywords": keywords,
            "justification": f"{LABEL} A faithful image must show {quoted} as described.",
        }
    )


def _mention_questions(reading: Reading, index: int) -> list[RubricQuestionReply]:
    mention = reading.mentions[index]
    if mention.kind == "background":
        return _background_questions(mention)
    ref = _reference(reading, index)
    verb = "Are" if mention.plural else "Is"
    select_by_color = _ambiguous(reading, index) and mention.color is not None
    questions = [_existence_question(mention, with_color=select_by_color)]
    if mention.color is not None and not select_by_color:
        questions.append(
            _question(f"{verb} {ref} {mention.color.word}?", "color", [mention.color.word])
        )
    if mention.size is not None:
        questions.append(
            _question(f"{verb} {ref} {mention.size.word}?", "attribute", [mention.size.word])
        )
    for attribute in mention.attributes:
        questions.append(_question(f"{verb} {ref} {attribute}?", "attribute", [attribute]))
    for location in mention.locations:
        where = LOCATION_TEXT[location.value]
        questions.append(_question(f"{verb} {ref} {where}?", "location", [location.word]))
    return questions


def _existence_question(mention: Mention, *, with_color: bool) -> RubricQuestionReply:
    color = mention.color.word if with_color and mention.color is not None else ""
    phrase = f"{color} {mention.noun}".strip()
    keywords = ([color] if color else []) + [mention.noun]
    count = mention.count
    if mention.kind == "unknown":
        shown = f"{count.text()} {phrase}" if count else _with_article(mention, phrase)
        return _question(f"Does the image show {shown}?", "other", _with_count(count, keywords))
    if count is None:
        text = f"Are there {phrase}?" if mention.plural else f"Is there {indefinite(phrase)}?"
        return _question(text, "color" if color else "object", keywords)
    if count.value == 1 and not count.at_least:
        return _question(
            f"Is there exactly one {phrase}?", "counting", _with_count(count, keywords)
        )
    return _question(
        f"Are there {count.text()} {phrase}?", "counting", _with_count(count, keywords)
    )


def _background_questions(mention: Mention) -> list[RubricQuestionReply]:
    if mention.color is None:
        return [_question("Does the image have a plain background?", "other", [mention.noun])]
    word = mention.color.word
    return [_question(f"Is the background {word}?", "color", [word, mention.noun])]


def _relation_question(reading: Reading, relation: Relation) -> RubricQuestionReply:
    subject = reading.mentions[relation.subject]
    verb = "Are" if subject.plural else "Is"
    text = (
        f"{verb} {_reference(reading, relation.subject)} {RELATION_TEXT[relation.relation]} "
        f"{_reference(reading, relation.object)}?"
    )
    tag = "attribute" if relation.relation.endswith("than") else "spatial"
    return _question(text, tag, [relation.word])


def _reference(reading: Reading, index: int) -> str:
    """ "the circle", or "the red circle" when another mention is also a circle."""
    mention = reading.mentions[index]
    if mention.kind == "background":
        return "the background"
    color = mention.color
    if color is not None and not color.predicative and _ambiguous(reading, index):
        return f"the {color.word} {mention.noun}"
    return f"the {mention.noun}"


def _ambiguous(reading: Reading, index: int) -> bool:
    mention = reading.mentions[index]
    key = mention.noun if mention.kind == "unknown" else mention.kind
    return any(
        (other.noun if other.kind == "unknown" else other.kind) == key
        for i, other in enumerate(reading.mentions)
        if i != index
    )


def _with_count(count: Count | None, keywords: list[str]) -> list[str]:
    return [count.word, *keywords] if count is not None else keywords


def _with_article(mention: Mention, phrase: str) -> str:
    if mention.plural or not mention.article:
        return phrase
    return indefinite(phrase)


def indefinite(phrase: str) -> str:
    return f"{'an' if phrase[:1] and phrase[0] in 'aeiou' else 'a'} {phrase}"
