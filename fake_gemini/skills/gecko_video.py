"""The simulated judge's Gecko video answers, and batched validator answers for both Gecko metrics.

It writes multiple-choice rubrics from the same small vocabulary the image judge reads (shapes,
colours, counts, positions, relations) plus motion: moving from one side to another, rising
and falling, growing, shrinking, staying still. It answers validator questions by watching the
video: it decodes Motion-JPEG AVI frames with Pillow (no codec library needed), looks at the
first, middle and last frames with the image judge's vision, and checks every choice against
them. Static claims must hold in most of those frames; motion claims compare the first frame
with the last. A choice it cannot verify never holds; when no choice holds it still has to pick
one, and says so. It recognises its requests by our prompts' <untrusted-CODE kind=...> blocks:
video_description (rubric), video_question (one question), video_questions (batched video)
and questions (batched image, answered with the image judge's own yes/no verdicts, or its
choice answers for a hand-written multiple-choice question).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import struct
from dataclasses import dataclass
from statistics import fmean
from typing import Any, Literal

from evalq.core.prompting import extract_section
from fake_gemini.protocol import FakeMedia, FakeRequest, SeesImages
from fake_gemini.skills.gecko_image import (
    LABEL,
    RELATION_TEXT,
    Mention,
    Reading,
    answer_choice_question,
    answer_question,
    read,
)
from fake_gemini.vision import Blob, Scene

# ---- decoding videos -------------------------------------------------------------------------

_MAX_FRAMES = 10_000


def avi_frames(data: bytes) -> list[bytes]:
    """The JPEG frames of a Motion-JPEG AVI, in order; [] for anything else (never raises)."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"AVI ":
        return []
    frames: list[bytes] = []
    _walk(data, 12, min(len(data), 8 + struct.unpack_from("<I", data, 4)[0]), frames, False)
    return frames


def _walk(data: bytes, start: int, end: int, frames: list[bytes], in_movi: bool) -> None:
    pos = start
    while pos + 8 <= end and len(frames) < _MAX_FRAMES:
        fourcc = data[pos : pos + 4]
        size = struct.unpack_from("<I", data, pos + 4)[0]
        body_end = min(pos + 8 + size, end)
        if fourcc == b"LIST" and pos + 12 <= end:
            kind = data[pos + 8 : pos + 12]
            _walk(data, pos + 12, body_end, frames, in_movi or kind == b"movi")
        elif in_movi and fourcc[2:] == b"dc" and data[pos + 8 : pos + 10] == b"\xff\xd8":
            frames.append(data[pos + 8 : body_end])
        pos += 8 + size + (size & 1)


def video_frames(media: list[FakeMedia]) -> tuple[list[bytes], str]:
    """The first attached video's frames, or [] and why it could not be watched."""
    video = next((m for m in media if m.mime_type.lower().startswith("video/")), None)
    if video is None:
        sent = ", ".join(m.mime_type for m in media) or "nothing"
        return [], f"no video was attached (got {sent})"
    if video.data is None:
        return [], f"the video was sent by reference ({video.uri}), which I cannot open"
    frames = avi_frames(video.data)
    if not frames:
        return [], f"I cannot decode this {video.mime_type} (I only read Motion-JPEG AVI)"
    return frames, ""


@dataclass(frozen=True)
class Footage:
    """What the judge saw of a video: scenes of its first, middle and last frames."""

    scenes: tuple[Scene, ...]
    note: str = ""

    @property
    def first(self) -> Scene:
        return self.scenes[0]

    @property
    def last(self) -> Scene:
        return self.scenes[-1]

    def describe(self) -> str:
        if not self.scenes:
            return f"I could not watch the video ({self.note})."
        start = self.first.describe().removeprefix("I see ").rstrip(".")
        end = self.last.describe().removeprefix("I see ").rstrip(".")
        return f"At the start I see {start}; at the end I see {end}."


def watch(request: FakeRequest, judge: SeesImages) -> Footage:
    frames, why = video_frames(request.media)
    if not frames:
        return Footage((), why)
    picked = sorted({0, len(frames) // 2, len(frames) - 1})
    scenes = tuple(judge.scene_for([FakeMedia("image/jpeg", data=frames[i])]) for i in picked)
    if all(scene.width == 0 for scene in scenes):
        return Footage((), "its frames do not decode")
    return Footage(scenes)


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


# ---- question templates (written by the rubric, recognised by the validator) -----------------

Q_OBJECT = "Which of these appears in the video?"
Q_COLOR = "What colour is the {ref} in the video?"
Q_BACKGROUND = "What colour is the background of the video?"
Q_COUNT = "How many {what} are in the video?"
Q_LOCATION = "Where in the frame is the {ref}?"
Q_RELATION = "Where is the {a} relative to the {b}?"
Q_ACTION = "What does the {ref} do during the video?"
Q_DIRECTION = "In which direction does the {ref} move during the video?"

ACTION_CHOICES: dict[MotionKind, str] = {
    "moves": "it moves across the frame",
    "still": "it stays still",
    "grows": "it grows",
    "shrinks": "it shrinks",
}
DIRECTIONS: tuple[tuple[Side, Side], ...] = (
    ("left", "right"),
    ("right", "left"),
    ("top", "bottom"),
    ("bottom", "top"),
)
COLORS = ("red", "blue", "green", "yellow", "purple", "orange", "pink", "brown")
DISTINCT_SHAPES = ("circle", "square", "triangle", "star", "diamond")
NUMBERS = ("one", "two", "three", "four", "five", "six")
PLACES = {
    "left": "on the left",
    "right": "on the right",
    "top": "at the top",
    "bottom": "at the bottom",
    "center": "in the center",
}
RELATION_GROUPS = (
    ("left of", "right of", "above", "below"),
    ("next to", "inside", "above", "below"),
    ("larger than", "smaller than", "above", "below"),
)

_RE_COLOR = re.compile(r"^what colou?r (?:is|are) the (?P<ref>.+?) in the video\?$")
_RE_BACKGROUND = re.compile(r"^what colou?r is the background(?: of the video)?\?$")
_RE_COUNT = re.compile(r"^how many (?P<what>.+?) are (?:there )?in the video\?$")
_RE_LOCATION = re.compile(r"^where in the frame (?:is|are) the (?P<ref>.+?)\?$")
_RE_RELATION = re.compile(r"^where (?:is|are) the (?P<a>.+?) relative to the (?P<b>.+?)\?$")
_RE_MOTION = re.compile(
    r"^(?:what does|what do|in which direction does|in which direction do|which way does|"
    r"which way do|how does|how do) the (?P<ref>.+?) (?:do|move|go|change)\b.*\?$"
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


def _rng(*parts: str) -> random.Random:
    seed = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return random.Random(int.from_bytes(seed[:8], "big"))


def _indefinite(phrase: str) -> str:
    return f"{'an' if phrase[:1] in tuple('aeiou') else 'a'} {phrase}"


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
    return _indefinite(" ".join(w for w in (size, color, shape) if w))


def _pick(options: list[str], k: int, *seed: str) -> list[str]:
    pool = list(dict.fromkeys(options))
    _rng(*seed).shuffle(pool)
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
                _indefinite(m.noun) if not m.plural else m.noun,
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
        _rng(seed, item.question, item.correct).shuffle(choices)
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


# ---- answering multiple-choice questions -----------------------------------------------------

_CHOICE_RE = re.compile(r"^\s*(?P<letter>[a-z])\s*[).:]\s*(?P<text>.*)$")


def _choice_checks(question: str, choices: list[str]) -> list[tuple[str, str]] | None:
    """For static templates: (kind, yes/no check) per choice; None for motion questions."""
    q = question.strip().lower()
    if _RE_MOTION.match(q):
        return None
    if m := _RE_BACKGROUND.match(q):
        return [("static", f"Is the background {c}?") for c in choices]
    if m := _RE_COLOR.match(q):
        return [("static", f"Is the {m['ref']} {c}?") for c in choices]
    if m := _RE_COUNT.match(q):
        return [("static", f"Are there exactly {c} {m['what']}?") for c in choices]
    if m := _RE_LOCATION.match(q):
        return [("static", f"Is the {m['ref']} {c}?") for c in choices]
    if m := _RE_RELATION.match(q):
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
        pick = _rng(question, *texts).choice(letters)
        return pick, f"{LABEL} {footage.describe()} None of the choices can be checked; I guess."
    holds: list[bool] = []
    notes: list[str] = []
    checks = _choice_checks(question, texts)
    if checks is None:
        m = _RE_MOTION.match(question.strip().lower())
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
    pick = _rng(question, *texts).choice(letters)
    return pick, f"{LABEL} {said} None of the choices matches what I see; I guess."


def _choices(block: str) -> list[str]:
    return [line.strip() for line in block.splitlines() if _CHOICE_RE.match(line)]


def _numbered_video_questions(block: str) -> list[tuple[int, str, list[str]]]:
    out: list[tuple[int, str, list[str]]] = []
    for line in block.splitlines():
        if m := re.match(r"^(\d+)\.\s+(.*)$", line):
            out.append((int(m.group(1)), m.group(2).strip(), []))
        elif out and _CHOICE_RE.match(line):
            out[-1][2].append(line.strip())
    return out


_YES_NO_MARK = re.compile(r"\s*\(yes or no\)\s*$", re.IGNORECASE)


def answer(request: FakeRequest, judge: SeesImages) -> str | None:
    text = request.text
    if (description := extract_section(text, "video_description")) is not None:
        rubric = write_video_rubric(description)
        if (missing := extract_section(text, "missing_keywords")) is not None:
            rubric = fill_video_gap(rubric, missing.splitlines())
        return json.dumps(rubric)
    if (question := extract_section(text, "video_question")) is not None:
        choices = _choices(extract_section(text, "choices") or "")
        letter, why = answer_choice(question, choices, watch(request, judge))
        if request.response_schema is None:
            return f"{why}\nAnswer: {letter}"
        return json.dumps({"explanation": why, "answer": letter})
    if (block := extract_section(text, "video_questions")) is not None:
        footage = watch(request, judge)
        answers = []
        for number, q, choices in _numbered_video_questions(block):
            letter, why = answer_choice(q, choices, footage)
            answers.append({"question_id": number, "explanation": why, "answer": letter})
        return json.dumps({"answers": answers})
    if (block := extract_section(text, "questions")) is not None:
        scene = judge.scene_for(request.media)
        answers = []
        for number, q, choices in _numbered_video_questions(block):
            if choices:  # a hand-written multiple-choice question in an image batch
                picked, why = answer_choice_question(q, choices, scene)
                answers.append(
                    {"question_id": number, "explanation": why, "answer": picked or "cannot tell"}
                )
                continue
            verdict = answer_question(_YES_NO_MARK.sub("", q), scene)
            answers.append(
                {
                    "question_id": number,
                    "explanation": verdict.explanation,
                    "answer": verdict.answer,
                }
            )
        return json.dumps({"answers": answers})
    return None
