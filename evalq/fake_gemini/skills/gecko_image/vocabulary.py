"""The words the Gecko image judge knows: shapes, colours, counts, sizes, positions and
relations, each mapped to what vision can check. A word outside these tables is something to
look for that the judge cannot see, so it answers "no" about it."""

from __future__ import annotations

import re

from evalq.fake_gemini.vision import SHAPES

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
LONGEST_PHRASE = max(len(words) for words in RELATION_PHRASES)
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
TOKEN_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[.,;:!?]")
