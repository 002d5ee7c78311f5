"""Writing a video rubric: keywords with types and one lettered multiple-choice question per
keyword (or per few), from the image judge's reading of the description plus its motions;
and the re-ask for keywords left uncovered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalq.fake_gemini.skills.gecko_image.reading import Mention, Reading, read
from evalq.fake_gemini.skills.gecko_image.rubric import indefinite
from evalq.fake_gemini.skills.gecko_image.vocabulary import LABEL, RELATION_TEXT
from evalq.fake_gemini.skills.gecko_video.motion import Motion, motions
from evalq.fake_gemini.skills.gecko_video.templates import (
    ACTION_CHOICES,
    COLORS,
    DIRECTIONS,
    DISTINCT_SHAPES,
    NUMBERS,
    PLACES,
    Q_ACTION,
    Q_BACKGROUND,
    Q_COLOR,
    Q_COUNT,
    Q_DIRECTION,
    Q_LOCATION,
    Q_OBJECT,
    Q_RELATION,
    RELATION_GROUPS,
    rng,
)

# ---- writing rubrics -------------------------------------------------------------------------


@dataclass
class _Keyword:
    keyword: str
    type: str


@dataclass
class _Item:
    keywords: list[str]
    question: str
    correct: str
    distractors: list[str]


def _singular(mention: Mention) -> str:
    noun = mention.kind if mention.kind not in ("any", "unknown", "background") else mention.noun
    return noun


def _ref(mention: Mention, *, with_color: bool = True) -> str:
    color = mention.color.word if with_color and mention.color is not None else ""
    noun = mention.noun if mention.kind == "unknown" else _singular(mention)
    if mention.plural and mention.kind not in ("unknown", "any"):
        noun += "s"
    elif mention.kind == "any":
        noun = "objects" if mention.plural else "object"
    return f"{color} {noun}".strip()


def _phrase(color: str | None, size: str | None, shape: str) -> str:
    return indefinite(" ".join(w for w in (size, color, shape) if w))


def _pick(options: list[str], k: int, *seed: str) -> list[str]:
    pool = list(dict.fromkeys(options))
    rng(*seed).shuffle(pool)
    return pool[:k]


def _colors_of(reading: Reading, kind: str) -> set[str]:
    return {m.color.value for m in reading.mentions if m.kind == kind and m.color is not None}


def _same_kind(reading: Reading, index: int) -> bool:
    kind = reading.mentions[index].kind
    return sum(m.kind == kind for m in reading.mentions) > 1


def _mention_items(reading: Reading, index: int, seed: str) -> list[_Item]:
    m = reading.mentions[index]
    if m.kind == "background":
        if m.color is None:
            return []
        wrong = [c for c in COLORS if c != m.color.value]
        return [
            _Item(
                [m.noun, m.color.word],
                Q_BACKGROUND,
                m.color.value,
                _pick(wrong, 3, seed, "background"),
            )
        ]
    if m.kind == "unknown":
        shapes = [_phrase(None, None, s) for s in DISTINCT_SHAPES]
        return [
            _Item(
                [m.noun, *m.attributes],
                Q_OBJECT,
                indefinite(m.noun) if not m.plural else m.noun,
                _pick(shapes, 3, seed, m.noun),
            )
        ]
    items: list[_Item] = []
    color = m.color.value if m.color is not None and not m.color.predicative else None
    size = m.size.word if m.size is not None else None
    extra = [w for w in (size, *m.attributes) if w]
    if m.count is not None and m.count.at_least:
        extra.append(m.count.word)
    if m.kind != "any":
        wrong_shapes = [
            s
            for s in DISTINCT_SHAPES
            if s != m.kind and not (color and color in _colors_of(reading, s))
        ]
        items.append(
            _Item(
                [m.noun, *extra],
                Q_OBJECT,
                _phrase(color, size, m.kind),
                [_phrase(color, size, s) for s in _pick(wrong_shapes, 3, seed, m.noun)],
            )
        )
    if m.color is not None:
        others = _colors_of(reading, m.kind) - {m.color.value}
        wrong = [c for c in COLORS if c != m.color.value and c not in others]
        if _same_kind(reading, index) or m.kind == "any":
            noun = m.kind if m.kind != "any" else "shape"
            items.append(
                _Item(
                    [m.color.word],
                    Q_OBJECT,
                    _phrase(m.color.value, size, noun),
                    [_phrase(c, size, noun) for c in _pick(wrong, 3, seed, m.color.word)],
                )
            )
        else:
            items.append(
                _Item(
                    [m.color.word],
                    Q_COLOR.format(ref=_ref(m, with_color=False)).replace(
                        " is ", " are " if m.plural else " is ", 1
                    ),
                    m.color.value,
                    _pick(wrong, 3, seed, m.color.word),
                )
            )
    if m.count is not None and not m.count.at_least and 1 <= m.count.value <= len(NUMBERS):
        what = _ref(m)
        what = what if what.endswith("s") else what + "s"
        right = NUMBERS[m.count.value - 1]
        wrong_n = [n for n in NUMBERS[:5] if n != right]
        items.append(
            _Item([m.count.word], Q_COUNT.format(what=what), right, _pick(wrong_n, 3, seed, what))
        )
    for location in m.locations:
        right = PLACES[location.value]
        wrong_p = [p for p in PLACES.values() if p != right and p != PLACES["center"]]
        items.append(
            _Item(
                [location.word],
                Q_LOCATION.format(ref=_ref(m)),
                right,
                _pick(wrong_p, 3, seed, location.word),
            )
        )
    return items


def _relation_items(reading: Reading, seed: str) -> list[_Item]:
    items = []
    for relation in reading.relations:
        a, b = reading.mentions[relation.subject], reading.mentions[relation.object]
        group = next((g for g in RELATION_GROUPS if relation.relation in g), RELATION_GROUPS[0])
        wrong = [RELATION_TEXT[r] for r in group if r != relation.relation]
        verb = "Where are" if a.plural else "Where is"
        items.append(
            _Item(
                [relation.word],
                Q_RELATION.format(a=_ref(a), b=_ref(b)).replace("Where is", verb, 1),
                RELATION_TEXT[relation.relation],
                _pick(wrong, 3, seed, relation.word),
            )
        )
    return items


def _motion_items(motion: Motion, subject: Mention) -> list[_Item]:
    ref = _ref(subject)
    does = "do" if subject.plural else "does"
    verb = motion.verb or motion.direction_words
    items = [
        _Item(
            [verb],
            Q_ACTION.format(ref=ref).replace("does", does, 1),
            ACTION_CHOICES[motion.kind],
            [c for k, c in ACTION_CHOICES.items() if k != motion.kind],
        )
    ]
    if motion.direction is not None:
        text = {d: f"from {d[0]} to {d[1]}" for d in DIRECTIONS}
        items.append(
            _Item(
                [motion.direction_words or verb],
                Q_DIRECTION.format(ref=ref).replace("does", does, 1),
                text[motion.direction],
                [t for d, t in text.items() if d != motion.direction],
            )
        )
    return items


def _keyword_type(item: _Item, keyword: str, reading: Reading) -> str:
    if item.question.startswith(("What does", "What do")):
        return "action"
    if item.question.startswith("In which direction"):
        return "temporal relation"
    if item.question in (Q_BACKGROUND,) and keyword in {m.noun for m in reading.mentions}:
        return "scene"
    if item.question.startswith(("Where is", "Where are", "Where in")):
        return "spatial relation"
    if item.question.startswith("How many"):
        return "attribute"
    if item.question.startswith("What colour") or keyword in {
        m.color.word for m in reading.mentions if m.color is not None
    }:
        return "color"
    nouns = {m.noun: m.kind for m in reading.mentions}
    if keyword in nouns:
        return "entity" if nouns[keyword] == "unknown" else "object"
    return "attribute"


def write_video_rubric(description: str) -> dict[str, object]:
    """Keywords with types and one lettered question per keyword (or per few), deterministic."""
    found = motions(description)
    static, cursor, anchors = "", 0, []
    for motion in found:
        static += description[cursor : motion.span[0]]
        anchors.append(len(static))
        static += " "
        cursor = motion.span[1]
    static += description[cursor:]
    reading = read(static)
    seed = description.strip().lower()
    items: list[_Item] = []
    for index in range(len(reading.mentions)):
        items += _mention_items(reading, index, seed)
    items += _relation_items(reading, seed)
    for motion, anchor in zip(found, anchors, strict=True):
        before = len(read(static[:anchor]).mentions)
        if before:
            items += _motion_items(motion, reading.mentions[before - 1])
    keywords: list[_Keyword] = []
    questions = []
    for item in items:
        for keyword in item.keywords:
            if keyword not in {k.keyword for k in keywords}:
                keywords.append(_Keyword(keyword, _keyword_type(item, keyword, reading)))
        choices = [item.correct, *item.distractors[:3]]
        rng(seed, item.question, item.correct).shuffle(choices)
        letter = "abcd"[choices.index(item.correct)]
        wrong = ", ".join(f"'{c}'" for c in choices if c != item.correct)
        questions.append(
            {
                "keywords": item.keywords,
                "question": item.question,
                "choices": [f"{x}) {c}" for x, c in zip("abcd", choices, strict=False)],
                "answer": letter,
                "justification": (
                    f"{LABEL} The description asks for '{item.correct}' "
                    f"({', '.join(item.keywords)}); {wrong} are what a video that got this "
                    "detail wrong would show instead."
                ),
            }
        )
    return {"keywords": [k.__dict__ for k in keywords], "questions": questions}


def fill_video_gap(rubric: dict[str, Any], missing: list[str]) -> dict[str, Any]:
    """A re-ask for uncovered keywords: one question for each of its own missing keywords."""
    keywords = [k for k in rubric["keywords"] if k["keyword"] in {m.strip() for m in missing}]
    wanted = [k["keyword"] for k in keywords]
    picked: list[dict[str, Any]] = []
    for keyword in wanted:
        if any(keyword in q["keywords"] for q in picked):
            continue
        question = next((q for q in rubric["questions"] if keyword in q["keywords"]), None)
        if question is not None:
            picked.append(question)
    return {"keywords": keywords, "questions": picked}
