"""Motion in text (moving from one side to another, rising, falling, growing, shrinking,
staying still) and in the video: a motion claim compares the subject in the first frame with
the last; a static claim must hold in most of the frames looked at."""

from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import fmean
from typing import Literal

from evalq.fake_gemini.skills.gecko_image.reading import read
from evalq.fake_gemini.skills.gecko_image.verdicts import answer_question
from evalq.fake_gemini.skills.gecko_video.footage import Footage
from evalq.fake_gemini.vision import Blob, Scene

# ---- motion in text --------------------------------------------------------------------------

Side = Literal["left", "right", "top", "bottom"]
MotionKind = Literal["moves", "still", "grows", "shrinks"]
_SIDE = r"(left|right|top|bottom)"
_VERBS = (
    r"moving|moves|move|slides|sliding|slide|travels|travelling|traveling|goes|going|rolls|"
    r"rolling|drifts|drifting|floats|floating|flies|flying|glides|gliding|passes|passing"
)
_MOTION_RE = re.compile(
    r"\b(?:(?P<verb>" + _VERBS + r")\s+)?"
    r"(?P<dir>(?:from\s+)?(?:the\s+)?" + _SIDE + r"\s+(?:side\s+)?to\s+(?:the\s+)?" + _SIDE + r")\b"
    r"|\b(?P<verb2>" + _VERBS + r")(?:\s+(?P<dir2>(?:to\s+the\s+|towards\s+the\s+)?(?:left|right)"
    r"|up(?:wards)?|down(?:wards)?|across(?:\s+the\s+frame)?))?\b"
    r"|\b(?P<rise>rising|rises|rise|climbing|climbs|ascending|ascends)\b"
    r"|\b(?P<fall>falling|falls|fall|dropping|drops|sinking|sinks|descending|descends)\b"
    r"|\b(?P<grow>growing|grows|grow|expanding|expands|getting\s+bigger)\b"
    r"|\b(?P<shrink>shrinking|shrinks|shrink|getting\s+smaller)\b"
    r"|\b(?P<still>(?:stays|staying|stay|stands|standing|remains|remaining)\s+still|"
    r"stays\s+put|not\s+moving|motionless|stationary|does\s+not\s+move|doesn't\s+move)\b",
    re.IGNORECASE,
)
_OPPOSITE: dict[str, Side] = {"left": "right", "right": "left", "top": "bottom", "bottom": "top"}


@dataclass(frozen=True)
class Motion:
    """A claim about change over time: what kind, and for movement which way (from, to)."""

    kind: MotionKind
    direction: tuple[Side, Side] | None
    verb: str  # the words naming the change, e.g. "moving" or "stays still"
    direction_words: str  # e.g. "from left to right"; "" when no direction is given
    span: tuple[int, int]


def motions(text: str) -> list[Motion]:
    """Every motion claim in a text, in order."""
    found = []
    for m in _MOTION_RE.finditer(text):
        if m.group("dir"):
            sides = re.findall(_SIDE, m.group("dir").lower())
            direction = (sides[0], sides[1]) if sides[0] != sides[1] else None
            found.append(
                Motion("moves", direction, m.group("verb") or "", m.group("dir"), m.span())
            )
        elif m.group("verb2"):
            words = (m.group("dir2") or "").lower()
            direction = _single_direction(words)
            found.append(
                Motion("moves", direction, m.group("verb2"), m.group("dir2") or "", m.span())
            )
        elif m.group("rise"):
            found.append(Motion("moves", ("bottom", "top"), m.group("rise"), "", m.span()))
        elif m.group("fall"):
            found.append(Motion("moves", ("top", "bottom"), m.group("fall"), "", m.span()))
        elif m.group("grow"):
            found.append(Motion("grows", None, m.group("grow"), "", m.span()))
        elif m.group("shrink"):
            found.append(Motion("shrinks", None, m.group("shrink"), "", m.span()))
        elif m.group("still"):
            found.append(Motion("still", None, m.group("still"), "", m.span()))
    return found


def _single_direction(words: str) -> tuple[Side, Side] | None:
    for side in ("left", "right"):
        if side in words:
            return _OPPOSITE[side], side  # moving to the right: from the left to the right
    if words.startswith("up"):
        return "bottom", "top"
    if words.startswith("down"):
        return "top", "bottom"
    return None


# ---- motion in the video ---------------------------------------------------------------------

_MOVED = 0.1  # centroid travel (share of the frame) that counts as moving
_STILL = 0.05
_GREW = 1.3  # area ratio last / first that counts as growing (its inverse as shrinking)


@dataclass(frozen=True)
class Subject:
    """What a question is about: a shape (or "any") and, if given, its colour."""

    kind: str
    color: str | None
    plural: bool
    text: str


def subject_of(phrase: str) -> Subject | None:
    mentions = read(phrase).mentions
    if not mentions:
        return None
    m = mentions[0]
    color = m.color.value if m.color is not None else None
    return Subject(m.kind, color, m.plural, phrase)


def _select(subject: Subject, scene: Scene) -> list[Blob]:
    return [
        b
        for b in scene.blobs
        if subject.kind in ("any", b.shape) and (subject.color is None or b.color == subject.color)
    ]


def motion_holds(claim: Motion, subject: Subject, footage: Footage) -> tuple[bool, str]:
    """Compare the subject in the first and last frames: travel, direction, growth."""
    if subject.kind in ("unknown", "background"):
        return False, f"I cannot follow {subject.text} in the video."
    first, last = _select(subject, footage.first), _select(subject, footage.last)
    if not first or not last:
        return False, f"I cannot find {subject.text} at both the start and the end."
    dx = fmean(b.centroid[0] for b in last) - fmean(b.centroid[0] for b in first)
    dy = fmean(b.centroid[1] for b in last) - fmean(b.centroid[1] for b in first)
    ratio = fmean(b.pixels for b in last) / max(1.0, fmean(b.pixels for b in first))
    travel = max(abs(dx), abs(dy))
    seen = f"{subject.text} travels {travel:.2f} of the frame and ends {ratio:.2f}x its size"
    if claim.kind == "still":
        return travel <= _STILL and 1 / _GREW < ratio < _GREW, seen
    if claim.kind == "grows":
        return ratio >= _GREW, seen
    if claim.kind == "shrinks":
        return ratio <= 1 / _GREW, seen
    if travel <= _MOVED:
        return False, seen
    if claim.direction is None:
        return True, seen
    horizontal = abs(dx) >= abs(dy)
    actual: tuple[Side, Side]
    if horizontal:
        actual = ("left", "right") if dx > 0 else ("right", "left")
    else:
        actual = ("top", "bottom") if dy > 0 else ("bottom", "top")
    return claim.direction == actual, f"{seen}, from {actual[0]} to {actual[1]}"


def static_holds(check: str, footage: Footage) -> bool:
    """A yes/no check that holds in most of the frames looked at."""
    yes = sum(answer_question(check, scene).answer == "yes" for scene in footage.scenes)
    return yes * 2 > len(footage.scenes)
