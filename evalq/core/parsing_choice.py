"""Parsers for multiple-choice verdicts and for replies that answer several questions at once: every
way a judge writes an answer that we accept is listed here, and anything else raises
UnparseableReply, so a reply we cannot read is an unscored question, never a guess."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from typing import Any

from evalq.core.errors import UnparseableReply
from evalq.core.replies import clip, extract_json, hedge, options_named

_ANSWER_KEYS = ("answer", "verdict", "choice", "letter", "option", "Answer", "Verdict", "Choice")
_LABEL = (
    r"(?P<label>(?:final\s+)?(?:answer|verdict|choice|option|correct\s+(?:answer|choice|option)))"
)
# A letter that can only be a choice label: bracketed, or followed by ) . : or the end.
_LETTER_TOKEN = r"[(\[]?\s*(?P<letter>[a-zA-Z])\s*(?:[)\]]|(?=[.:,;]?\s*$)|[.:](?=\s|$))"
_LABELLED_RE = re.compile(
    _LABEL + r"\s*(?:(?:is|would\s+be)\s*)?[:=\-—]?\s*(?:option\s+|choice\s+|letter\s+)?"
    r"[\"'*`]*[(\[]?\s*(?P<letter>[a-zA-Z])\b(?P<after>[)\]]?)",
    re.IGNORECASE,
)
_LEADING_RE = re.compile(r"^[\s*_`\"'>#-]*" + _LETTER_TOKEN)
# One option of a hedge such as "a|b|c|d|e", "a/b" or "(a) or (b)": a letter standing alone.
_LETTER_OPTION_RE = re.compile(
    r"[\s\"'`*_(\[]*(?P<o>[a-zA-Z])(?![a-zA-Z0-9'])[)\]\"'`*_]*", re.IGNORECASE
)
_LINE_ID_RE = re.compile(
    r"^[\s*_#>-]*(?:q(?:uestion)?\s*#?\s*)?(?P<id>\d{1,3})\s*(?:[:.)\]-]|\s-\s)\s*(?P<rest>.+)$",
    re.IGNORECASE,
)
_BLOCK_RE = re.compile(r"<question>(?P<body>.*?)</question>", re.IGNORECASE | re.DOTALL)
_ID_KEYS = ("question_id", "questionId", "id", "index", "number", "question_number", "q")


def letters_for(choices: Sequence[str] | None) -> str:
    """The letters a question's choices allow: a-d for four choices (a-d when unknown)."""
    count = len(choices) if choices else 4
    return string.ascii_lowercase[: max(1, min(count, 26))]


def choice_text(choice: str) -> str:
    """A choice without its "b) " label, for matching a reply that repeats the choice's text."""
    m = re.match(r"^\s*[(\[]?[a-zA-Z]\s*[)\].:]\s*(?P<text>.*)$", choice)
    return (m.group("text") if m else choice).strip()


def label_choices(choices: Sequence[str]) -> list[str]:
    """Choices as "a) ...", "b) ...": labels added where missing, existing ones normalised."""
    return [
        f"{letter}) {choice_text(c)}"
        for letter, c in zip(string.ascii_lowercase, choices, strict=False)
    ]


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def _looks_like_json(text: str) -> bool:
    """A JSON reply (maybe cut off), as opposed to prose that starts with "[c]"."""
    stripped = text.strip()
    if stripped.startswith("["):
        return bool(re.match(r"^\[\s*[{\[\"\d\]]", stripped))
    return stripped.startswith(("{", "```json", "```JSON")) or (
        stripped.startswith("```") and "{" in stripped[:20]
    )


def _json_value(text: str) -> Any:
    """The reply's JSON value, or None for prose (a stray "[1]" in prose is no JSON reply). A
    reply that looks like JSON but does not parse is unparseable: its prose is no verdict."""
    try:
        data = extract_json(text)
    except UnparseableReply:
        if _looks_like_json(text):
            raise UnparseableReply("malformed JSON reply", raw=clip(text)) from None
        return None
    return data if isinstance(data, dict) or _looks_like_json(text) else None


def _from_value(value: Any, letters: str, choices: Sequence[str] | None, raw: str) -> str | None:
    """A letter from a JSON answer value: "c", "(c)", "c) red", or the choice's text."""
    if not isinstance(value, str):
        return None
    return _letter_in_text(value, letters, choices, raw)


def _single(segment: str, raw: str) -> None:
    """A verdict that opens with several letters ("a|b|c|d|e", "a/b") names no choice."""
    named = options_named(segment, _LETTER_OPTION_RE)
    if len(named) > 1:
        raise hedge(named, raw)


def _is_verdict_label(m: re.Match[str]) -> bool:
    """ "Answer:" or "Verdict:" commits to a choice; "option (a) is ..." may only discuss one."""
    return re.search(r"answer|verdict", m.group("label"), re.IGNORECASE) is not None


def _letter_in_text(text: str, letters: str, choices: Sequence[str] | None, raw: str) -> str | None:
    plain = text.replace("**", "").replace("__", "").replace("`", "").strip()
    if not plain:
        return None
    matches = list(_LABELLED_RE.finditer(plain))
    for m in matches:
        if _is_verdict_label(m):
            _single(plain[m.start("letter") :], raw)
    found = [m for m in matches if _labelled_ok(m, plain)]
    if found:
        verdicts = [m for m in found if _is_verdict_label(m)]
        said = [m.group("letter").lower() for m in verdicts]
        finals = {
            m.group("letter").lower() for m in verdicts if m.group("label")[:5].lower() == "final"
        }
        if len(set(said)) > 1 and len(finals) != 1:
            raise hedge(list(dict.fromkeys(said)), raw)
        last = (verdicts or found)[-1].group("letter").lower()  # "Answer:" over "option (a)"
        letter = finals.pop() if finals else last
        return letter if letter in letters else None
    _single(plain, raw)
    lead = _LEADING_RE.match(plain)
    if lead is not None:
        letter = lead.group("letter").lower()
        return letter if letter in letters else None
    return _by_choice_text(plain, letters, choices)


def _labelled_ok(m: re.Match[str], text: str) -> bool:
    """ "Answer: c", "answer is (b)", "Answer: B) red"; not "Answer: a red circle"."""
    if m.group("after"):
        return True
    rest = text[m.end() :]
    if m.group("letter").isupper() and m.group("letter").lower() != "a":
        return not re.match(r"^[a-z]", rest)  # "Answer: B red" is still b; "Answer: Blue" no
    return not re.match(r"^[ \t]*[a-zA-Z0-9]", rest)


def _by_choice_text(text: str, letters: str, choices: Sequence[str] | None) -> str | None:
    """A reply that is exactly one choice's text ("red" for "b) red") names that choice."""
    if not choices:
        return None
    wanted = _norm(
        re.sub(r"^(?:the\s+)?(?:answer|verdict)\s*(?:is)?\s*[:=-]?", "", text, flags=re.I)
    )
    hits = [
        letter
        for letter, choice in zip(letters, choices, strict=False)
        if wanted and _norm(choice_text(choice)) == wanted
    ]
    return hits[0] if len(hits) == 1 else None


def parse_letter(text: str, choices: Sequence[str] | None = None) -> str:
    """Read a multiple-choice verdict letter ("a".."d") from JSON or prose.

    ``choices`` bounds the letters and lets a reply that repeats one choice's text count. "a" is
    also an English article: a bare "a" counts only where nothing but a letter can stand (alone,
    bracketed, or followed by ")" / "." / ":"), never "a red circle".
    A reply that looks like JSON but does not parse is unparseable (its prose may quote other
    choices). A verdict naming several letters ("a/b", "Verdict: a|b|c|d|e", the template
    echoed back), or answers that disagree, hedges: unparseable too.
    """
    if not isinstance(text, str) or not text.strip():
        raise UnparseableReply("empty reply", raw=text if isinstance(text, str) else None)
    letters = letters_for(choices)
    data = _json_value(text)
    if isinstance(data, dict):
        for key in _ANSWER_KEYS:
            if (letter := _from_value(data.get(key), letters, choices, text)) is not None:
                return letter
    if data is not None:
        raise UnparseableReply(
            f"JSON reply has no answer among {', '.join(letters)}", raw=clip(text)
        )
    letter = _letter_in_text(text, letters, choices, text)
    if letter is None:
        raise UnparseableReply(
            f"could not read a choice among {', '.join(letters)}", raw=clip(text)
        )
    return letter


# ---- batched replies ------------------------------------------------------------------------


def _id_of(item: dict[str, Any]) -> int | None:
    for key in _ID_KEYS:
        value = item.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            return value
        if isinstance(value, str) and (m := re.search(r"\d+", value)):
            return int(m.group())
    return None


def _answer_of(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, bool):
        return "yes" if item else "no"
    if not isinstance(item, dict):
        return None
    for key in (*_ANSWER_KEYS, "result"):
        value = item.get(key)
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, str):
            return value
    return None


def _from_json(data: Any, count: int) -> dict[int, str] | None:
    """{"answers": [{"question_id": 1, "answer": "b"}, ...]}, a bare list, or {"1": "b"}."""
    items: Any = data
    if isinstance(data, dict):
        for key in ("answers", "verdicts", "results", "questions", "qas"):
            if isinstance(data.get(key), list | dict):
                items = data[key]
                break
    out: dict[int, str] = {}
    if isinstance(items, dict):
        for key, value in items.items():
            m = re.search(r"\d+", str(key))
            answer = _answer_of(value)
            if m and answer is not None:
                out.setdefault(int(m.group()), answer)
        return out or None
    if not isinstance(items, list):
        return None
    with_ids = [isinstance(i, dict) and _id_of(i) is not None for i in items]
    for position, item in enumerate(items, start=1):
        answer = _answer_of(item)
        if answer is None:
            continue
        number = _id_of(item) if isinstance(item, dict) and any(with_ids) else position
        if number is not None and 1 <= number <= count:
            out.setdefault(number, answer)
    return out or None


def _from_prose(text: str, count: int) -> dict[int, str]:
    """<question> blocks in order, or lines such as "Q2: (c) red" / "3. Answer: no"."""
    out: dict[int, str] = {}
    blocks = _BLOCK_RE.findall(text)
    if blocks:
        for position, body in enumerate(blocks, start=1):
            if position <= count:
                out[position] = body.strip()
        return out
    current: int | None = None
    for line in text.splitlines():
        m = _LINE_ID_RE.match(line)
        if m and 1 <= int(m.group("id")) <= count:
            current = int(m.group("id"))
            out[current] = m.group("rest").strip()
        elif current is not None and line.strip():
            out[current] = f"{out[current]}\n{line.strip()}"
    return out


def split_batched_reply(text: str, count: int) -> dict[int, str]:
    """One raw answer per question id (1-based) from a reply that answers ``count`` questions;
    each is then read by the per-question parser, so batched and single calls read answers alike
    and a question missing from the reply is reported as missing.

    JSON first ({"answers": [{"question_id", "answer"}]} and the usual drift), then numbered
    prose. Ids missing from the result were not answered. A reply with no readable answer at
    all raises UnparseableReply.
    """
    if not isinstance(text, str) or not text.strip():
        raise UnparseableReply("empty reply", raw=text if isinstance(text, str) else None)
    data = _json_value(text)
    if data is not None:
        found = _from_json(data, count)
        if found:
            return found
        raise UnparseableReply("JSON reply lists no answers by question", raw=clip(text))
    found = _from_prose(text, count)
    if not found:
        raise UnparseableReply("could not find answers by question number", raw=clip(text))
    return found
