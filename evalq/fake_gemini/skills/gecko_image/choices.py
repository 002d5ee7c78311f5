"""Answering a multiple-choice question about an image: each choice becomes a yes/no check
that holds exactly when the choice is the answer, and only a single holding choice is picked."""

from __future__ import annotations

import json
import re

from evalq.fake_gemini.skills.gecko_image.verdicts import answer_question
from evalq.fake_gemini.skills.gecko_image.vocabulary import LABEL
from evalq.fake_gemini.vision import Scene

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
