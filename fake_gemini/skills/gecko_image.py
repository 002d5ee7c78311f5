"""The simulated judge's Gecko image skill: rubrics from a description, verdicts from pixels.

Offline runs need a judge whose verdicts depend on the image, or the pipeline would report the
same score for every row and test nothing. This skill reads the description (or question) with
a small fixed grammar of shapes, colours, counts, sizes and positions, and answers validator
questions from what ``vision`` actually finds in the image bytes. It never follows text inside
the untrusted blocks: words it does not know become things to look for, and since it cannot
see them it answers "no". Every reply is labelled "[simulated judge]". It is the brain's last
resort: every other skill is asked first (fake_gemini.skills).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Literal

from evalq.core.models import RubricQuestionReply, RubricReply, VerdictReply
from evalq.core.prompting import extract_section
from fake_gemini.protocol import FakeRequest, SeesImages, schema_properties
from fake_gemini.vision import (
    SHAPES,
    Blob,
    Scene,
    location_holds,
    relation_holds,
    size_of,
)

LABEL = "[simulated judge]"

# ---- vocabulary ---------------------------------------------------------------------------

COLOR_WORDS: dict[str, str] = {
    **{name: name for name in ("red", "orange", "yellow", "green", "blue", "purple")},
    **{name: name for name in ("pink", "brown", "black", "white", "gray")},
    "grey": "gray",
    "violet": "purple",
    "magenta": "pink",
    "navy": "blue",
    "cyan": "blue",
    "crimson": "red",
    "scarlet": "red",
    "gold": "yellow",
    "golden": "yellow",
}
COLOR_MODIFIERS = ("light", "dark", "bright", "pale", "deep")
SHAPE_WORDS: dict[str, str] = {
    **{name: name for name in SHAPES},
    **{name + "s": name for name in SHAPES},
    "disc": "circle",
    "discs": "circle",
    "disk": "circle",
    "disks": "circle",
    "dot": "circle",
    "dots": "circle",
    "ellipse": "oval",
    "ellipses": "oval",
    "rhombus": "diamond",
    "rhombuses": "diamond",
}
GENERIC_WORDS = ("object", "objects", "shape", "shapes", "thing", "things", "item", "items")
GENERIC_WORDS_SINGULAR = ("anything", "something", "figure")
BACKGROUND_WORDS = ("background", "backdrop")
NUMBER_WORDS: dict[str, int] = {
    "one": 1,
    "single": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
VAGUE_COUNTS = ("several", "multiple", "many")  # read as "at least two"
SIZE_WORDS: dict[str, str] = {
    "small": "small",
    "tiny": "small",
    "little": "small",
    "big": "large",
    "large": "large",
    "huge": "large",
    "giant": "large",
}
LOCATION_WORDS: dict[str, str] = {
    "left": "left",
    "right": "right",
    "top": "top",
    "upper": "top",
    "bottom": "bottom",
    "lower": "bottom",
    "center": "center",
    "centre": "center",
    "middle": "center",
}
# Multi-word phrases are matched longest first; the keyword is what the rubric reports.
RELATION_PHRASES: dict[tuple[str, ...], tuple[str, str]] = {
    ("to", "the", "left", "of"): ("left of", "left of"),
    ("on", "the", "left", "of"): ("left of", "left of"),
    ("left", "of"): ("left of", "left of"),
    ("to", "the", "right", "of"): ("right of", "right of"),
    ("on", "the", "right", "of"): ("right of", "right of"),
    ("right", "of"): ("right of", "right of"),
    ("on", "top", "of"): ("above", "on top of"),
    ("above",): ("above", "above"),
    ("over",): ("above", "over"),
    ("atop",): ("above", "atop"),
    ("below",): ("below", "below"),
    ("under",): ("below", "under"),
    ("underneath",): ("below", "underneath"),
    ("beneath",): ("below", "beneath"),
    ("next", "to"): ("next to", "next to"),
    ("beside",): ("next to", "beside"),
    ("alongside",): ("next to", "alongside"),
    ("near",): ("next to", "near"),
    ("inside", "of"): ("inside", "inside"),
    ("inside",): ("inside", "inside"),
    ("within",): ("inside", "within"),
    ("bigger", "than"): ("larger than", "bigger than"),
    ("larger", "than"): ("larger than", "larger than"),
    ("smaller", "than"): ("smaller than", "smaller than"),
}
_LONGEST_PHRASE = max(len(words) for words in RELATION_PHRASES)
RELATION_TEXT = {
    "left of": "to the left of",
    "right of": "to the right of",
    "above": "above",
    "below": "below",
    "next to": "next to",
    "inside": "inside",
    "larger than": "larger than",
    "smaller than": "smaller than",
}
LOCATION_TEXT = {
    "left": "on the left side of the image",
    "right": "on the right side of the image",
    "top": "at the top of the image",
    "bottom": "at the bottom of the image",
    "center": "in the center of the image",
}
ARTICLES = ("a", "an", "the", "another")
COPULAS = ("is", "are", "looks", "appears", "seems")
# Filler that carries no checkable content, in descriptions or in questions.
_STOP_TEXT = """
    of on in at with and or be being been there here this that these those it its their each
    every some any all both also just only very which what where as by for from into onto
    image picture photo photograph scene frame canvas shown show shows showing depicted depict
    depicts does do can you see visible contain contains containing have has having exactly
    placed located positioned sitting standing drawn side corner part half plain solid flat
    simple colored coloured color colour shaped other than against
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[.,;:!?]")


# ---- reading text into mentions -------------------------------------------------------------


@dataclass(frozen=True)
class Attr:
    """A property named in the text; predicative ones ("the circle is red") test, not select."""

    kind: Literal["color", "size", "location"]
    value: str
    word: str
    predicative: bool = False

    def as_predicate(self) -> Attr:
        return replace(self, predicative=True)


@dataclass(frozen=True)
class Count:
    value: int
    word: str
    at_least: bool = False
    vague: bool = False

    def text(self) -> str:
        return f"at least {self.word}" if self.at_least and not self.vague else self.word


@dataclass
class Mention:
    """Something the text asks to see. ``kind`` is a shape, "any", "background" or "unknown"."""

    noun: str
    kind: str
    plural: bool
    article: str = ""
    count: Count | None = None
    color: Attr | None = None
    size: Attr | None = None
    locations: list[Attr] = field(default_factory=list)
    attributes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Relation:
    subject: int
    relation: str
    word: str
    object: int


@dataclass
class Reading:
    """The parse of a description or a question, plus its keywords in reading order."""

    mentions: list[Mention] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    dangling: list[str] = field(default_factory=list)  # keywords attached to nothing


@dataclass
class _Pending:
    """Words seen since the last noun, waiting for the noun they modify."""

    article: str = ""
    count: Count | None = None
    at_least: bool = False
    modifier: str = ""
    color: Attr | None = None
    size: Attr | None = None
    locations: list[Attr] = field(default_factory=list)
    words: list[str] = field(default_factory=list)

    def started_phrase(self) -> bool:
        return bool(self.count or self.color or self.size or self.words)


class _Reader:
    """A one-pass reader: modifiers queue up until a noun arrives or the phrase ends.

    Modifiers left over at the end of a phrase (``the circle is red``) describe the previous
    noun, which is how the same code reads descriptions and predicate-style questions.
    """

    def __init__(self) -> None:
        self.out = Reading()
        self.pending = _Pending()
        self.copula = False
        self.open_relation: tuple[int | None, str, str] | None = None

    def read(self, text: str) -> Reading:
        tokens = _TOKEN_RE.findall(text.lower())
        i = 0
        while i < len(tokens):
            phrase = _relation_at(tokens, i)
            if phrase is not None:
                length, relation, word = phrase
                self._relation(relation, word)
                i += length
            else:
                self._word(tokens[i])
                i += 1
        self._end_phrase()
        if self.open_relation is not None:
            self.out.dangling.append(self.open_relation[2])
        self.out.keywords = list(dict.fromkeys(self.out.keywords))
        return self.out

    def _word(self, token: str) -> None:
        pending = self.pending
        if token in ".,;:!?":
            self._end_phrase()
        elif (
            token == "one" and pending.started_phrase() and not pending.count and self.out.mentions
        ):
            self._pronoun_one()
        elif token in ARTICLES or token in NUMBER_WORDS or token.isdigit() or token in VAGUE_COUNTS:
            self._determiner(token)
        elif token == "least":
            pending.at_least = True
        elif token in COLOR_MODIFIERS:
            pending.modifier = token
        elif token in COLOR_WORDS:
            word = f"{pending.modifier} {token}".strip()
            pending.color, pending.modifier = Attr("color", COLOR_WORDS[token], word), ""
            self._keyword(word)
        elif token in SIZE_WORDS:
            pending.size = Attr("size", SIZE_WORDS[token], token)
            self._keyword(token)
        elif token in LOCATION_WORDS:
            self._location(Attr("location", LOCATION_WORDS[token], token))
        elif token in SHAPE_WORDS:
            self._noun(token, SHAPE_WORDS[token], plural=token != SHAPE_WORDS[token])
        elif token in GENERIC_WORDS or token in GENERIC_WORDS_SINGULAR:
            self._noun(token, "any", plural=token.endswith("s") and token in GENERIC_WORDS)
        elif token in BACKGROUND_WORDS:
            self._noun(token, "background", plural=False)
        elif token in COPULAS:
            self._flush_words()
            self.copula = True
        elif token in STOP_WORDS:
            self._flush_words()
        else:
            pending.words.append(token)

    def _determiner(self, token: str) -> None:
        if self.pending.started_phrase():
            self._end_phrase()
        pending = self.pending
        if token in ARTICLES:
            pending.article = token
            return
        if token in VAGUE_COUNTS:
            pending.count = Count(2, token, at_least=True, vague=True)
        else:
            value = int(token) if token.isdigit() else NUMBER_WORDS[token]
            pending.count = Count(value, token, at_least=pending.at_least)
        self._keyword(token)

    def _pronoun_one(self) -> None:
        """ "a red circle and a blue one": "one" repeats the previous noun, it is not a count."""
        last = self.out.mentions[-1]
        self._noun(last.noun, last.kind, plural=False)

    def _location(self, attr: Attr) -> None:
        self._keyword(attr.word)
        if self.out.mentions and not self.pending.started_phrase():
            self.out.mentions[-1].locations.append(attr.as_predicate())
        else:
            self.pending.locations.append(attr)

    def _relation(self, relation: str, word: str) -> None:
        self._end_phrase()
        subject = len(self.out.mentions) - 1 if self.out.mentions else None
        if self.open_relation is not None:
            self.out.dangling.append(self.open_relation[2])
        self.open_relation = (subject, relation, word)
        self._keyword(word)

    def _noun(self, noun: str, kind: str, *, plural: bool) -> None:
        pending = self.pending
        count = pending.count
        mention = Mention(
            noun=noun,
            kind=kind,
            plural=plural or (count is not None and count.value > 1),
            article=pending.article,
            count=count,
            color=pending.color,
            size=pending.size,
            locations=list(pending.locations),
            attributes=[" ".join(pending.words)] if pending.words else [],
        )
        self._keyword(*mention.attributes, noun)
        self._add(mention)

    def _add(self, mention: Mention) -> None:
        index = len(self.out.mentions)
        self.out.mentions.append(mention)
        if self.open_relation is not None:
            subject, relation, word = self.open_relation
            if subject is None:
                self.out.dangling.append(word)
            else:
                self.out.relations.append(Relation(subject, relation, word, index))
            self.open_relation = None
        self.pending = _Pending()
        self.copula = False

    def _flush_words(self) -> None:
        """Unknown words before a stop word: a predicate after "is", otherwise a new noun."""
        words = self.pending.words
        if not words:
            return
        phrase = " ".join(words)
        self._keyword(phrase)
        pending = self.pending
        if self.copula and self.out.mentions and not (pending.article or pending.count):
            self.out.mentions[-1].attributes.append(phrase)
            pending.words = []
            return
        count = pending.count
        plural = (count is not None and count.value > 1) or phrase.endswith("s")
        self._add(
            Mention(
                noun=phrase,
                kind="unknown",
                plural=plural,
                article=pending.article,
                count=count,
                color=pending.color,
                size=pending.size,
                locations=list(pending.locations),
            )
        )

    def _end_phrase(self) -> None:
        """Close the phrase; leftover modifiers describe the previous noun, if there is one."""
        self._flush_words()
        pending = self.pending
        leftovers = [a for a in (pending.color, pending.size, *pending.locations) if a is not None]
        if pending.count is not None:
            self.out.dangling.append(pending.count.word)
        if self.out.mentions:
            last = self.out.mentions[-1]
            for attr in leftovers:
                if attr.kind == "color":
                    last.color = attr.as_predicate()
                elif attr.kind == "size":
                    last.size = attr.as_predicate()
                else:
                    last.locations.append(attr.as_predicate())
        else:
            self.out.dangling.extend(attr.word for attr in leftovers)
        self.pending = _Pending()

    def _keyword(self, *words: str) -> None:
        self.out.keywords.extend(words)


def _relation_at(tokens: list[str], i: int) -> tuple[int, str, str] | None:
    for length in range(_LONGEST_PHRASE, 0, -1):
        found = RELATION_PHRASES.get(tuple(tokens[i : i + length]))
        if found is not None:
            return length, found[0], found[1]
    return None


def read(text: str) -> Reading:
    """Parse a description or a question with the judge's fixed vocabulary."""
    return _Reader().read(text)


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
        text = f"Are there {phrase}?" if mention.plural else f"Is there {_indefinite(phrase)}?"
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
    return _indefinite(phrase)


def _indefinite(phrase: str) -> str:
    return f"{'an' if phrase[:1] and phrase[0] in 'aeiou' else 'a'} {phrase}"


# ---- answering validator questions ----------------------------------------------------------


@dataclass(frozen=True)
class _Check:
    ok: bool
    says: str


def answer_question(question: str, scene: Scene) -> VerdictReply:
    """Answer a yes/no question from the scene alone; anything unverifiable is a "no"."""
    if scene.width == 0:
        return _verdict(False, [scene.describe()])
    reading = read(question)
    checks = _checks(reading, scene)
    if not checks:
        checks = [_Check(False, "I could not find anything in the question that I can look for.")]
    ok = all(check.ok for check in checks)
    shown = [check.says for check in checks if check.ok == ok]
    return _verdict(ok, [scene.describe(), *shown])


def _verdict(ok: bool, sentences: list[str]) -> VerdictReply:
    return VerdictReply(explanation=f"{LABEL} {' '.join(sentences)}", answer="yes" if ok else "no")


def _checks(reading: Reading, scene: Scene) -> list[_Check]:
    checks: list[_Check] = []
    for mention in reading.mentions:
        checks.extend(_mention_checks(mention, scene))
    for relation in reading.relations:
        checks.append(_relation_check(reading, relation, scene))
    checks.extend(
        _Check(False, f"I could not tell what '{word}' refers to.") for word in reading.dangling
    )
    return checks


def _mention_checks(mention: Mention, scene: Scene) -> list[_Check]:
    if mention.kind == "unknown":
        return [_Check(False, f"I could not find {_looked_for(mention)} in the image.")]
    if mention.kind == "background":
        return [_background_check(mention, scene)]
    checks = [
        _Check(False, f"I cannot tell whether {_name(mention)} is {a}.") for a in mention.attributes
    ]
    found = _select(mention, scene)
    checks.append(_count_check(mention, found))
    if found:
        checks.extend(_predicate_checks(mention, found))
    return checks


def _background_check(mention: Mention, scene: Scene) -> _Check:
    if mention.color is None:
        return _Check(True, f"The background is plain {scene.background}.")
    wanted = mention.color.value
    if scene.background == wanted:
        return _Check(True, f"The background is {wanted}.")
    return _Check(False, f"The background is {scene.background}, not {wanted}.")


def _select(mention: Mention, scene: Scene) -> list[Blob]:
    """Blobs matching the mention's kind and its attributive (selecting) properties."""
    found = [blob for blob in scene.blobs if mention.kind in ("any", blob.shape)]
    for attr in _attributive(mention):
        found = [blob for blob in found if _has(blob, attr)]
    return found


def _attributive(mention: Mention) -> list[Attr]:
    attrs = [mention.color, mention.size, *mention.locations]
    return [attr for attr in attrs if attr is not None and not attr.predicative]


def _predicative(mention: Mention) -> list[Attr]:
    attrs = [mention.color, mention.size, *mention.locations]
    return [attr for attr in attrs if attr is not None and attr.predicative]


def _has(blob: Blob, attr: Attr) -> bool:
    if attr.kind == "color":
        return blob.color == attr.value
    if attr.kind == "size":
        return size_of(blob) == attr.value
    return location_holds(attr.value, blob)


def _count_check(mention: Mention, found: list[Blob]) -> _Check:
    adjs = [attr.value for attr in _attributive(mention) if attr.kind != "location"]
    seen = f"I count {len(found)} {' '.join([*adjs, _plural(_kind_noun(mention), len(found))])}."
    count = mention.count
    if count is None:
        return _Check(bool(found), seen if found else f"I could not find {_looked_for(mention)}.")
    ok = len(found) >= count.value if count.at_least else len(found) == count.value
    return _Check(ok, seen)


def _predicate_checks(mention: Mention, found: list[Blob]) -> list[_Check]:
    """Singular subjects need one blob with the property; plural ones need all of them."""
    checks = []
    for attr in _predicative(mention):
        having = [blob for blob in found if _has(blob, attr)]
        ok = len(having) == len(found) if mention.plural else bool(having)
        what = LOCATION_TEXT[attr.value] if attr.kind == "location" else attr.value
        if ok:
            checks.append(_Check(True, f"{_name(mention).capitalize()} {_be(mention)} {what}."))
        else:
            actual = ", ".join(blob.describe() for blob in found)
            checks.append(
                _Check(
                    False,
                    f"{_name(mention).capitalize()} {_be(mention, positive=False)} {what}: I see {actual}.",
                )
            )
    return checks


def _relation_check(reading: Reading, relation: Relation, scene: Scene) -> _Check:
    subject, obj = reading.mentions[relation.subject], reading.mentions[relation.object]
    text = f"{_name(subject)} {_be(subject)} {RELATION_TEXT[relation.relation]} {_name(obj)}"
    if "unknown" in (subject.kind, obj.kind) or "background" in (subject.kind, obj.kind):
        return _Check(False, f"I cannot check whether {text}.")
    subjects, objects = _select(subject, scene), _select(obj, scene)
    if not subjects or not objects:
        return _Check(False, f"I cannot check whether {text}: one of them is missing.")
    holds = [
        any(a is not b and relation_holds(relation.relation, a, b) for b in objects)
        for a in subjects
    ]
    ok = all(holds) if subject.plural else any(holds)
    if ok:
        return _Check(True, f"{text[:1].upper()}{text[1:]}.")
    return _Check(False, f"It is not true that {text}.")


def _name(mention: Mention) -> str:
    color = mention.color
    adj = f"{color.value} " if color is not None and not color.predicative else ""
    return f"the {adj}{_plural(_kind_noun(mention), 2 if mention.plural else 1)}"


def _looked_for(mention: Mention) -> str:
    if mention.kind == "unknown":
        return mention.noun if mention.plural else _indefinite(mention.noun)
    adjs = [attr.value for attr in _attributive(mention) if attr.kind != "location"]
    phrase = " ".join([*adjs, _plural(_kind_noun(mention), 2 if mention.plural else 1)])
    return phrase if mention.plural else _indefinite(phrase)


def _kind_noun(mention: Mention) -> str:
    return "object" if mention.kind == "any" else mention.kind


def _plural(noun: str, n: int) -> str:
    return noun if n == 1 else f"{noun}s"


def _be(mention: Mention, *, positive: bool = True) -> str:
    verb = "are" if mention.plural else "is"
    return verb if positive else f"{verb} not"


# ---- answering multiple-choice questions about an image ---------------------------------------

_CHOICE_LABEL_RE = re.compile(r"^\s*[(\[]?(?P<letter>[a-z])\s*[)\].:]\s*(?P<text>.*)$")
_IMAGE_WORDS = r"(?: (?:in|of) the (?:image|picture|photo))?"
_RE_COLOR_OF = re.compile(r"^what colou?r (?:is|are) the (?P<ref>.+?)" + _IMAGE_WORDS + r"\?$")
_RE_BACKGROUND_COLOR = re.compile(r"^what colou?r is the background" + _IMAGE_WORDS + r"\?$")
_RE_HOW_MANY = re.compile(
    r"^how many (?P<what>.+?) (?:are there|are shown|are visible|are in the (?:image|picture)|"
    r"can you see|do you see)\?$"
)
_RE_RELATIVE = re.compile(r"^where (?:is|are) the (?P<a>.+?) relative to the (?P<b>.+?)\?$")
_RE_WHERE = re.compile(r"^where (?:in the (?:image|picture) )?(?:is|are) the (?P<ref>.+?)\?$")


def choice_texts(choices: list[str]) -> list[str]:
    """Choices without their "b) " labels."""
    out = []
    for choice in choices:
        m = _CHOICE_LABEL_RE.match(choice)
        out.append((m.group("text") if m else choice).strip())
    return out


def choice_checks(question: str, texts: list[str]) -> list[str]:
    """One yes/no question per choice that holds exactly when the choice is the answer."""
    q = " ".join(question.strip().lower().split())
    if _RE_BACKGROUND_COLOR.match(q):
        return [f"Is the background {t}?" for t in texts]
    if m := _RE_COLOR_OF.match(q):
        return [f"Is the {m['ref']} {t}?" for t in texts]
    if m := _RE_HOW_MANY.match(q):
        return [f"Are there exactly {t} {m['what']}?" for t in texts]
    if m := _RE_RELATIVE.match(q):
        return [f"Is the {m['a']} {t} the {m['b']}?" for t in texts]
    if m := _RE_WHERE.match(q):
        return [f"Is the {m['ref']} {t}?" for t in texts]
    return [f"Does the image show {t}?" for t in texts]


def answer_choice_question(
    question: str, choices: list[str], scene: Scene
) -> tuple[str | None, str]:
    """The letter of the one choice the image bears out, or None (with why) when it can not
    tell: no choice holds, more than one does, or the question is about nothing it can see."""
    texts = choice_texts(choices)
    letters = "abcdefghijklmnopqrstuvwxyz"[: len(texts)]
    if scene.width == 0 or not texts:
        return None, f"{LABEL} {scene.describe()} I cannot tell which choice is right."
    holds = [
        answer_question(check, scene).answer == "yes" for check in choice_checks(question, texts)
    ]
    right = [letter for letter, ok in zip(letters, holds, strict=True) if ok]
    if len(right) == 1:
        which = texts[letters.index(right[0])]
        return right[0], f"{LABEL} {scene.describe()} So the answer is '{which}'."
    why = "none of the choices matches" if not right else "more than one choice fits"
    return None, f"{LABEL} {scene.describe()} {why.capitalize()}: I cannot tell."


def choice_reply(letter: str | None, explanation: str, *, structured: bool) -> str:
    """An answer, or an honest "cannot tell" that names no letter (and so is no verdict)."""
    if structured:
        return json.dumps({"explanation": explanation, "answer": letter or "cannot tell"})
    return f"{explanation}\nAnswer: {letter}" if letter else explanation


# ---- answering a request -----------------------------------------------------------------------


def answer(request: FakeRequest, judge: SeesImages) -> str:
    kind = _request_kind(request)
    if kind == "rubric":
        rubric = write_rubric(_description(request.text))
        if (missing := extract_section(request.text, "missing_keywords")) is not None:
            rubric = fill_gap(rubric, missing.splitlines())
        return rubric.model_dump_json()
    if kind == "verdict" and (choices := extract_section(request.text, "choices")):
        letter, why = answer_choice_question(
            _question_text(request.text),
            [line for line in choices.splitlines() if line.strip()],
            judge.scene_for(request.media),
        )
        return choice_reply(letter, why, structured=request.response_schema is not None)
    if kind == "verdict":
        verdict = answer_question(_question_text(request.text), judge.scene_for(request.media))
        if request.response_schema is None:
            return f"{verdict.explanation}\nVerdict: {verdict.answer}"
        return verdict.model_dump_json()
    return f"{LABEL} I only write Gecko rubrics and answer Gecko validator questions."


def _request_kind(request: FakeRequest) -> str:
    """Rubric, verdict or other: the response schema decides first, then the prompt's blocks."""
    properties = schema_properties(request.response_schema)
    if {"keywords", "questions"} <= properties:
        return "rubric"
    if "answer" in properties:
        return "verdict"
    if extract_section(request.text, "image_description") is not None:
        return "rubric"
    if extract_section(request.text, "question") is not None:
        return "verdict"
    return "other"


def _description(text: str) -> str:
    section = extract_section(text, "image_description")
    if section is not None:
        return section
    _, marker, after = text.rpartition("Image description:")
    return after if marker else text


def _question_text(text: str) -> str:
    section = extract_section(text, "question")
    if section is not None:
        return section
    _, marker, after = text.rpartition("Question:")
    if marker:
        return after.strip().splitlines()[0] if after.strip() else ""
    asked = [line for line in text.splitlines() if line.strip().endswith("?")]
    return asked[-1] if asked else text
