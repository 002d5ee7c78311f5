"""The video rubric's question templates and choice lists: the rubric writes its questions
from them and the validator recognises them, so both sides read the same words. And the seeded
random choices both make, so a run is deterministic."""

from __future__ import annotations

import hashlib
import random
import re

from evalq.fake_gemini.skills.gecko_video.motion import MotionKind, Side

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

RE_COLOR = re.compile(r"^what colou?r (?:is|are) the (?P<ref>.+?) in the video\?$")
RE_BACKGROUND = re.compile(r"^what colou?r is the background(?: of the video)?\?$")
RE_COUNT = re.compile(r"^how many (?P<what>.+?) are (?:there )?in the video\?$")
RE_LOCATION = re.compile(r"^where in the frame (?:is|are) the (?P<ref>.+?)\?$")
RE_RELATION = re.compile(r"^where (?:is|are) the (?P<a>.+?) relative to the (?P<b>.+?)\?$")
RE_MOTION = re.compile(
    r"^(?:what does|what do|in which direction does|in which direction do|which way does|"
    r"which way do|how does|how do) the (?P<ref>.+?) (?:do|move|go|change)\b.*\?$"
)


def rng(*parts: str) -> random.Random:
    seed = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return random.Random(int.from_bytes(seed[:8], "big"))
