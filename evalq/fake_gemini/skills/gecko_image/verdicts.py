"""Answering a yes/no validator question from the scene alone: every mention, property and
relation the question names is checked against the blobs vision found, and anything the judge
cannot verify is a "no"."""

from __future__ import annotations

from dataclasses import dataclass

from evalq.core.reply_schemas import VerdictReply
from evalq.fake_gemini.skills.gecko_image.reading import Attr, Mention, Reading, Relation, read
from evalq.fake_gemini.skills.gecko_image.rubric import indefinite
from evalq.fake_gemini.skills.gecko_image.vocabulary import LABEL, LOCATION_TEXT, RELATION_TEXT
from evalq.fake_gemini.vision import Blob, Scene, location_holds, relation_holds, size_of

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
        return mention.noun if mention.plural else indefinite(mention.noun)
    adjs = [attr.value for attr in _attributive(mention) if attr.kind != "location"]
    phrase = " ".join([*adjs, _plural(_kind_noun(mention), 2 if mention.plural else 1)])
    return phrase if mention.plural else indefinite(phrase)


def _kind_noun(mention: Mention) -> str:
    return "object" if mention.kind == "any" else mention.kind


def _plural(noun: str, n: int) -> str:
    return noun if n == 1 else f"{noun}s"


def _be(mention: Mention, *, positive: bool = True) -> str:
    verb = "are" if mention.plural else "is"
    return verb if positive else f"{verb} not"
