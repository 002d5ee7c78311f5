"""Answering the video's multiple-choice questions: static templates become yes/no checks on
the frames, motion questions compare the first frame with the last. When no choice holds the
judge still has to pick one, and says so."""

from __future__ import annotations

import re

from evalq.fake_gemini.skills.gecko_image.vocabulary import LABEL
from evalq.fake_gemini.skills.gecko_video.footage import Footage
from evalq.fake_gemini.skills.gecko_video.motion import (
    motion_holds,
    motions,
    static_holds,
    subject_of,
)
from evalq.fake_gemini.skills.gecko_video.templates import (
    RE_BACKGROUND,
    RE_COLOR,
    RE_COUNT,
    RE_LOCATION,
    RE_MOTION,
    RE_RELATION,
    rng,
)

# ---- answering multiple-choice questions -----------------------------------------------------

_CHOICE_RE = re.compile(r"^\s*(?P<letter>[a-z])\s*[).:]\s*(?P<text>.*)$")


def _choice_checks(question: str, choices: list[str]) -> list[tuple[str, str]] | None:
    """For static templates: (kind, yes/no check) per choice; None for motion questions."""
    q = question.strip().lower()
    if RE_MOTION.match(q):
        return None
    if m := RE_BACKGROUND.match(q):
        return [("static", f"Is the background {c}?") for c in choices]
    if m := RE_COLOR.match(q):
        return [("static", f"Is the {m['ref']} {c}?") for c in choices]
    if m := RE_COUNT.match(q):
        return [("static", f"Are there exactly {c} {m['what']}?") for c in choices]
    if m := RE_LOCATION.match(q):
        return [("static", f"Is the {m['ref']} {c}?") for c in choices]
    if m := RE_RELATION.match(q):
        return [("static", f"Is the {m['a']} {c} the {m['b']}?") for c in choices]
    return [("static", f"Is there {c}?") for c in choices]


def _choice_text(choice: str) -> str:
    m = _CHOICE_RE.match(choice)
    return m.group("text").strip() if m else choice.strip()


def answer_choice(question: str, choices: list[str], footage: Footage) -> tuple[str, str]:
    """The letter of the choice the video bears out, and an explanation starting with LABEL."""
    letters = "abcdefghijklmnopqrstuvwxyz"[: len(choices)]
    texts = [_choice_text(c) for c in choices]
    if not footage.scenes:
        pick = rng(question, *texts).choice(letters)
        return pick, f"{LABEL} {footage.describe()} None of the choices can be checked; I guess."
    holds: list[bool] = []
    notes: list[str] = []
    checks = _choice_checks(question, texts)
    if checks is None:
        m = RE_MOTION.match(question.strip().lower())
        subject = subject_of(m["ref"]) if m else None
        for text in texts:
            claims = motions(text)
            if subject is None or not claims:
                holds.append(False)
                continue
            ok, note = motion_holds(claims[0], subject, footage)
            holds.append(ok)
            notes.append(note)
    else:
        holds = [static_holds(check, footage) for _, check in checks]
    said = footage.describe() + (f" {notes[0].capitalize()}." if notes else "")
    true = [letter for letter, ok in zip(letters, holds, strict=True) if ok]
    if true:
        which = texts[letters.index(true[0])]
        return true[0], f"{LABEL} {said} So the answer is '{which}'."
    pick = rng(question, *texts).choice(letters)
    return pick, f"{LABEL} {said} None of the choices matches what I see; I guess."


def choices_in(block: str) -> list[str]:
    return [line.strip() for line in block.splitlines() if _CHOICE_RE.match(line)]


def numbered_questions(block: str) -> list[tuple[int, str, list[str]]]:
    out: list[tuple[int, str, list[str]]] = []
    for line in block.splitlines():
        if m := re.match(r"^(\d+)\.\s+(.*)$", line):
            out.append((int(m.group(1)), m.group(2).strip(), []))
        elif out and _CHOICE_RE.match(line):
            out[-1][2].append(line.strip())
    return out
