"""Our own split of a response into sentences, so a judge's labelling can be checked against it.

A judge is asked to split the response and label each sentence; nothing obliges it to keep
every one. We split the response ourselves and count what it left out. The split does not have
to agree with the judge's exactly (alignment tolerates merged and split sentences), but it must
not cut where a reader would not, so it keeps together:
- abbreviations ("e.g.", "Dr.", "et al.", "vs.") and initials ("J. Smith", "U.S. Army",
  "S. 4043");
- decimals and addresses ("3.5", "example.com"): a boundary needs white space after the mark;
- a sentence that goes on in lower case after a full stop ("approx. five"), since sentences
  start with something other than a lower-case letter;
and it cuts where a reader sees separate statements:
- after ".", "!", "?" or "…", with any closing quotes or brackets kept on the sentence;
- at a blank line, and at a line that starts a list item or a heading, or that holds only a
  URL; other line breaks inside a paragraph are hard wraps and read as spaces.
"""

from __future__ import annotations

import re
import unicodedata

# Abbreviations a capitalised word may follow ("Dr. Smith", "e.g. Paris", "Smith et al. Later").
ABBREVIATIONS = frozenset(
    [
        "e.g",
        "eg",
        "i.e",
        "ie",
        "cf",
        "vs",
        "viz",
        "al",
        "approx",
        "ca",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "sr",
        "jr",
        "st",
        "mt",
        "dept",
        "gen",
        "gov",
        "sen",
    ]
)
# Abbreviations only before a number ("No. 5", "Fig. 3", "Jan. 2020"): "The answer is no. The"
# ends a sentence.
NUMBER_ABBREVIATIONS = frozenset(
    [
        "no",
        "nos",
        "p",
        "pp",
        "fig",
        "figs",
        "eq",
        "vol",
        "ch",
        "sec",
        "art",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    ]
)

# A sentence mark, then closing quotes or brackets, then white space.
_END_RE = re.compile(r"(?:[.!?]+|…)[\"'”’»)\]]*(?=\s)")
_LIST_ITEM_RE = re.compile(r"^\s*(?:[-*•–+]\s+|\d{1,3}[.)]\s+|[a-zA-Z][.)]\s+|#{1,6}\s+|>\s*)")
_URL_LINE_RE = re.compile(r"^\s*(?:https?://|www\.)\S+\s*$")
_WORD_RE = re.compile(r"[^\W_]")
_MARKER_RE = re.compile(r"^\(?\d{1,3}$")
_INITIALS_RE = re.compile(r"^(?:[^\W\d_]\.)*[^\W\d_]$")  # "J", "U.S", "e.g"


def has_words(text: str) -> bool:
    """A sentence with a letter or digit in it can make a claim; "—", "*" or "..." can't."""
    return _WORD_RE.search(unicodedata.normalize("NFKC", text)) is not None


def split_sentences(text: str) -> list[str]:
    """The sentences of a response, in order, each stripped; none is empty."""
    sentences: list[str] = []
    for block in _blocks(text):
        sentences.extend(_split_block(block))
    return sentences


def _blocks(text: str) -> list[str]:
    """Paragraphs, list items, headings and URL lines, each as one line of text."""
    blocks: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            blocks.append(" ".join(current))
            current.clear()

    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        stripped = line.strip()
        if not stripped:
            flush()
        elif _URL_LINE_RE.match(stripped):
            flush()
            blocks.append(stripped)
        elif _LIST_ITEM_RE.match(stripped):
            flush()
            current.append(stripped)
            if stripped.startswith("#"):
                flush()  # a heading is a statement of its own
        else:
            current.append(stripped)
    flush()
    return blocks


def _split_block(block: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _END_RE.finditer(block):
        rest = block[match.end() :].lstrip()
        if not rest:
            break
        if _keeps_going(block[start : match.start()], block[match.start() : match.end()], rest):
            continue
        pieces.append(block[start : match.end()])
        start = match.end()
    pieces.append(block[start:])
    return [" ".join(p.split()) for p in pieces if p.strip()]


def _keeps_going(before: str, mark: str, rest: str) -> bool:
    """Is the full stop at the end of ``before`` part of an abbreviation, an initial, or a
    sentence that carries on in lower case?"""
    if rest[0].islower():
        return True
    if not mark.startswith(".") or mark.startswith(".."):
        return False
    words = before.rsplit(None, 1)
    last = words[-1].lstrip("(\"'“‘[") if words else ""
    if not last:
        return False
    if last.lower() in ABBREVIATIONS:
        return True
    if last.lower() in NUMBER_ABBREVIATIONS and rest[0].isdigit():
        return True
    if _MARKER_RE.match(before.strip()):
        return True  # the "1." of a numbered list item
    return _INITIALS_RE.match(last) is not None  # "J. Smith", "U.S. Army", "S. 4043"
