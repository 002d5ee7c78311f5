"""Reading a description or a question into mentions (what to look for, with its count,
colour, size and place) and relations between them, in one pass over the words."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from evalq.fake_gemini.skills.gecko_image.vocabulary import (
    ARTICLES,
    BACKGROUND_WORDS,
    COLOR_MODIFIERS,
    COLOR_WORDS,
    COPULAS,
    GENERIC_WORDS,
    GENERIC_WORDS_SINGULAR,
    LOCATION_WORDS,
    LONGEST_PHRASE,
    NUMBER_WORDS,
    RELATION_PHRASES,
    SHAPE_WORDS,
    SIZE_WORDS,
    STOP_WORDS,
    TOKEN_RE,
    VAGUE_COUNTS,
)

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
        tokens = TOKEN_RE.findall(text.lower())
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
    for length in range(LONGEST_PHRASE, 0, -1):
        found = RELATION_PHRASES.get(tuple(tokens[i : i + length]))
        if found is not None:
            return length, found[0], found[1]
    return None


def read(text: str) -> Reading:
    """Parse a description or a question with the judge's fixed vocabulary."""
    return _Reader().read(text)
